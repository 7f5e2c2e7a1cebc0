import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { REPO_ROOT } from './cli-helpers.js';

// What a project that installs the packed tarball gets, and what its install runs.

/** The npm lifecycle scripts that run when a package is installed as a dependency (npm 11 warns about each). */
const INSTALL_TIME_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

describe('the package', () => {
  it('runs no script of its own when installed: it builds in prepack', () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(Object.keys(scripts).filter((name) => INSTALL_TIME_SCRIPTS.includes(name))).toEqual([]);
    expect(scripts.prepack).toBe('npm run build');
  });

  it('ships the licence, the changelog, the built CLI and the bundled trace with its credit', () => {
    const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8' });
    const [packed] = JSON.parse(output) as { files: { path: string }[] }[];
    const paths = (packed?.files ?? []).map((file) => file.path);
    for (const path of ['LICENSE', 'CHANGELOG.md', 'README.md', 'dist/cli/bin.js', 'dist/cli/replay/bundled-trace.js', 'data/azure-llm-2023/conv.csv', 'data/azure-llm-2023/README.md']) {
      expect(paths, path).toContain(path);
    }
    expect(paths.filter((path) => path.startsWith('data/'))).toHaveLength(2);
  });
});

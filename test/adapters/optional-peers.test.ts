import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

// `ai` and `@openai/agents` are optional peers, so the main entry must load in a
// project that installed neither. Each check runs in a fresh Node process whose module resolution
// refuses both SDKs (and their packages); the entries are loaded from source through tsx.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BLOCK = fileURLToPath(new URL('./fixtures/block-sdks.mjs', import.meta.url));

function importInChild(specifier: string): { status: number | null; output: string } {
  const script = `const entry = await import(${JSON.stringify(specifier)}); console.log('exports', Object.keys(entry).length);`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--import', BLOCK, '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

describe('the optional peers ai and @openai/agents', () => {
  it('are refused in the child process (the check can fail)', () => {
    for (const sdk of ['ai', '@openai/agents']) {
      const child = importInChild(sdk);
      expect(child.status, child.output).not.toBe(0);
      expect(child.output).toContain('blocked by the optional-peers test');
    }
  });

  it('are not needed to import the main entry, withRun included', () => {
    const child = importInChild('./src/index.ts');
    expect(child.output).toMatch(/exports \d+/);
    expect(child.status, child.output).toBe(0);
  });

  it('are optional peer dependencies, pinned exactly for the tests', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      devDependencies: Record<string, string>;
      exports: Record<string, { default: string }>;
    };
    for (const sdk of ['ai', '@openai/agents']) {
      expect(pkg.peerDependencies[sdk], sdk).toBeDefined();
      expect(pkg.peerDependenciesMeta[sdk]?.optional, sdk).toBe(true);
      expect(pkg.devDependencies[sdk], sdk).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(pkg.exports['./ai-sdk']?.default).toBe('./dist/adapters/ai-sdk/index.js');
    expect(pkg.exports['./openai-agents']?.default).toBe('./dist/adapters/openai-agents/index.js');
  });
});

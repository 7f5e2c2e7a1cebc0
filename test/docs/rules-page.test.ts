import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

import { conformanceGroups } from '../../src/testing/conformance/groups.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const rules = readFileSync(join(root, 'docs/design/rules.md'), 'utf8');

/**
 * A case id as tests and comments cite it: a family letter (RG for the rate guards) and a number
 * from 1, with an optional sub-case (`L13.1`). Numbering starts at 1, so `C0` (the control
 * characters) is not a case, and three digits or more (`D800`, a code point) are not either.
 */
const CASE_ID = /\b(?:RG|[ACDGKLPRWX])[1-9]\d?(?:\.\d+)?\b/g;

/** The anchor of a case id on the rules page: lower case, a dot as a hyphen (`L13.1` → `l13-1`). */
const anchorOf = (id: string): string => id.toLowerCase().replace('.', '-');

/** The anchors the rules page defines with `<a id="…"></a>`, each with the id shown beside it. */
const anchors = new Map<string, string>();
for (const match of rules.matchAll(/<a id="([^"]+)"><\/a>\*\*([^*]+)\*\*/g)) anchors.set(match[1] as string, match[2] as string);

/** Every .ts file under the given folders of the repository. */
function sourceFiles(...folders: string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(path);
    }
  };
  for (const folder of folders) walk(join(root, folder));
  return files;
}

describe('docs/design/rules.md', () => {
  it('gives every case its own anchor, named after the id shown beside it, once', () => {
    const defined = [...rules.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]);
    expect(anchors.size, "an anchor without its bold id beside it").toBe(defined.length);
    expect(new Set(defined).size).toBe(defined.length);
    for (const [anchor, id] of anchors) expect(anchorOf(id), id).toBe(anchor);
  });

  it('has every case of the conformance battery', () => {
    const ids = conformanceGroups.flatMap((group) => group.steps.map((step) => step.id));
    expect(ids.filter((id) => !anchors.has(anchorOf(id)))).toEqual([]);
  });

  it('has every case id a test title or a comment in src, test, bench or scripts cites', () => {
    const missing: string[] = [];
    for (const file of sourceFiles('src', 'test', 'bench', 'scripts')) {
      const text = readFileSync(file, 'utf8');
      for (const [line, content] of text.split('\n').entries()) {
        for (const match of content.matchAll(CASE_ID)) {
          if (!anchors.has(anchorOf(match[0]))) missing.push(`${relative(root, file)}:${line + 1} ${match[0]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

// A project on the oldest Node that package.json's `engines` accepts installs quotaplane without an
// EBADENGINE warning: no package it pulls in at run time (every package-lock.json entry not marked
// dev) declares a newer Node. The devDependencies are the clone's own business (npm ci may warn
// for those; docs/getting-started.md says which).

const ROOT = join(import.meta.dirname, '..');

type Version = readonly [number, number, number];
type Comparator = readonly ['>=' | '>' | '<=' | '<' | '=', Version];

/** `20`, `20.1`, `20.x`, `v20.1.2` as the lowest version they name, with how many parts were given. */
function parseVersion(text: string): { version: Version; parts: number } {
  const parts = text.replace(/^v/, '').split('.').filter((part) => part !== '' && !/^[x*]$/i.test(part));
  if (parts.some((part) => !/^\d+$/.test(part)) || parts.length > 3) throw new Error(`cannot read the version "${text}"`);
  const numbers = parts.map(Number);
  return { version: [numbers[0] ?? 0, numbers[1] ?? 0, numbers[2] ?? 0], parts: parts.length };
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** One alternative of a range (`^20.19.0`, `>=18 <23`, `20.x`, `1 - 3`, `*`) as comparators that must all hold. */
function comparators(alternative: string): Comparator[] {
  const text = alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1');
  if (text === '' || text === '*' || /^x$/i.test(text)) return [];
  const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
  if (hyphen) return [['>=', parseVersion(hyphen[1]!).version], ...upTo(hyphen[2]!)];
  return text.split(/\s+/).flatMap((token): Comparator[] => {
    const match = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(token)!;
    const { version, parts } = parseVersion(match[2]!);
    const [major, minor] = version;
    switch (match[1]) {
      case '>=':
      case '>':
      case '<=':
      case '<':
        return [[match[1], version]];
      case '^':
        return [['>=', version], ['<', major > 0 ? [major + 1, 0, 0] : [0, minor + 1, 0]]];
      case '~':
        return [['>=', version], ['<', parts >= 2 ? [major, minor + 1, 0] : [major + 1, 0, 0]]];
      default:
        return parts === 3 ? [['=', version]] : [['>=', version], ...upTo(match[2]!)];
    }
  });
}

/** The upper end of a hyphen range or an x-range: `20` is everything below 21. */
function upTo(text: string): Comparator[] {
  const { version, parts } = parseVersion(text);
  if (parts === 3) return [['<=', version]];
  return [['<', parts === 2 ? [version[0], version[1] + 1, 0] : [version[0] + 1, 0, 0]]];
}

/** True when `version` satisfies the npm `engines` range (alternatives joined by `||`). */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) =>
    comparators(alternative).every(([operator, bound]) => {
      const order = compare(version, bound);
      return { '>=': order >= 0, '>': order > 0, '<=': order <= 0, '<': order < 0, '=': order === 0 }[operator];
    }),
  );
}

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly engines?: { readonly node?: string };
}

describe('the Node versions the installed packages declare', () => {
  it('reads npm ranges the way npm does, for the forms the lockfile uses', () => {
    const node20: Version = [20, 0, 0];
    expect(satisfies(node20, '>=20')).toBe(true);
    expect(satisfies(node20, '>=22')).toBe(false);
    expect(satisfies(node20, '>= 16.0.0')).toBe(true);
    expect(satisfies(node20, '20.x || 22.x || 23.x')).toBe(true);
    expect(satisfies(node20, '^16 || ^18 || >=20')).toBe(true);
    expect(satisfies(node20, '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies(node20, '18 || 20 || >=22')).toBe(true);
    expect(satisfies(node20, '>=18 <20')).toBe(false);
    expect(satisfies(node20, '14 - 20')).toBe(true);
    expect(satisfies(node20, '*')).toBe(true);
  });

  it('every package installed with quotaplane accepts the oldest Node of its engines field', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(manifest.engines.node.trim());
    expect(floor, `package.json engines.node "${manifest.engines.node}" is read as ">=N"`).not.toBeNull();
    const oldest = parseVersion(floor![1]!).version;
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.dev !== true && entry.engines?.node !== undefined)
      .filter(([, entry]) => !satisfies(oldest, entry.engines!.node!))
      .map(([path, entry]) => `${path}@${entry.version}: engines.node ${entry.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});

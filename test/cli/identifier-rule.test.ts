import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { runCli, temporaryDirectory } from './cli-helpers.js';

// The CLI refuses a deceptive name with the library's sentence and exit 2.
let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = temporaryDirectory();
});
afterEach(() => dir.remove());

it('halt refuses a tenant holding a right-to-left override with the library sentence (exit 2)', async () => {
  const store = `sqlite:${join(dir.path, 'q.db')}`;
  const { status, stderr } = await runCli(['halt', 'tenant', '--tenant', 'acme\u202e', '--reason', 'r', '--actor', 'alice', '--store', store]);
  expect(status).toBe(2);
  expect(stderr).toContain("option '--tenant <tenant>' argument");
  expect(stderr).toContain('must hold no control or format character, but holds U+202E at position 5');
});

it('an --actor with a zero-width space is refused naming --actor and the code point (exit 2)', async () => {
  const store = `sqlite:${join(dir.path, 'q.db')}`;
  const { status, stderr } = await runCli(['halt', 'tenant', '--tenant', 'acme', '--reason', 'r', '--actor', 'ali\u200bce', '--store', store]);
  expect(status).toBe(2);
  expect(stderr).toContain('--actor: must hold no control or format character, but holds U+200B at position 4');
});

import { fileURLToPath } from 'node:url';

import madge from 'madge';
import { expect, it } from 'vitest';

// No module of src/ imports, directly or through others, a module that imports it back, type-only
// imports included: a cycle means two files hold one concept between them (move the shared piece
// to a file of its own), and at run time one of them would see the other half-loaded.

const root = fileURLToPath(new URL('..', import.meta.url));

it('src/ has no import cycle', async () => {
  const graph = await madge(`${root}src`, { fileExtensions: ['ts'], tsConfig: `${root}tsconfig.json` });
  // An import madge could not resolve would silently leave its edges out of the graph.
  expect(graph.warnings().skipped.filter((path) => path.startsWith('.') || path.includes('src/'))).toEqual([]);
  expect(Object.keys(graph.obj()).length).toBeGreaterThan(200);
  expect(graph.circular()).toEqual([]);
});

// `npm run docs`: regenerates the generated reference pages from their sources of truth,
// docs/reference/http.md from the service's /openapi.json and docs/reference/cli.md from the CLI's
// --help. `npm run docs -- --check` writes nothing and exits 1 when a committed page is stale
// (test/docs/generated-pages.test.ts checks the same in the suite).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { renderCliReference } from './docs/render-cli.js';
import { renderHttpReference } from './docs/render-http.js';

/** Each generated page: where it lives and how to render it. */
export const GENERATED_PAGES: readonly { readonly path: string; readonly render: () => Promise<string> }[] = [
  { path: 'docs/reference/http.md', render: () => renderHttpReference() },
  { path: 'docs/reference/cli.md', render: () => renderCliReference() },
];

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
let stale = 0;
for (const page of GENERATED_PAGES) {
  const text = await page.render();
  const file = `${root}${page.path}`;
  let current: string | null = null;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = null;
  }
  if (current === text) continue;
  if (check) {
    stale++;
    process.stderr.write(`${page.path} is stale: run npm run docs\n`);
  } else {
    writeFileSync(file, text);
    process.stdout.write(`wrote ${page.path}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;

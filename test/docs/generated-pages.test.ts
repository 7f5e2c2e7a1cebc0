import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { renderCliReference } from '../../scripts/docs/render-cli.js';
import { renderHttpReference } from '../../scripts/docs/render-http.js';

const page = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

// The reference pages are generated from the service's /openapi.json and the CLI's --help. A
// change to a route schema or a flag that is not followed by `npm run docs` fails here, so the
// committed pages always say what the code does.
describe('the generated reference pages are current', () => {
  it('docs/reference/http.md is what /openapi.json renders to now (run npm run docs)', async () => {
    expect(page('docs/reference/http.md')).toBe(await renderHttpReference());
  });

  it('docs/reference/cli.md is what --help renders to now (run npm run docs)', async () => {
    expect(page('docs/reference/cli.md')).toBe(await renderCliReference());
  });

  it('the HTTP page has one section per operation of the document, and the CLI page one per command', async () => {
    const http = page('docs/reference/http.md');
    for (const id of ['admit', 'settle', 'resume', 'heartbeat', 'dispatch', 'halt', 'lift', 'prune']) {
      expect(http).toContain(`\n### ${id}\n`);
    }
    const cli = page('docs/reference/cli.md');
    for (const command of ['serve', 'replay', 'halt', 'lift', 'keys create', 'quota set', 'migrate', 'prune']) {
      expect(cli).toContain(`\n## quotaplane ${command}\n`);
    }
  });
});

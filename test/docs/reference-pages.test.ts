import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { EXIT } from '../../src/cli/exit-status.js';
import { OTHER_KNOWN_ENV, SERVE_SETTINGS } from '../../src/cli/serve/serve-settings.js';
import { PROBLEM_CODES, statusOf } from '../../src/http/errors.js';
import { STORE_URL_FORMS } from '../../src/store/store-url.js';

const page = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The cells of the table row whose first cell is `first`, or undefined when there is none. */
function row(text: string, first: string): string[] | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`| ${first} |`));
  return line
    ?.slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

// errors.md and configuration.md are written by hand; these tests hold them to the code's own
// tables, so a new code, exit status, setting or variable cannot ship undocumented.
describe('docs/reference/errors.md', () => {
  const errors = page('docs/reference/errors.md');

  it('has a row for every code an error reply can carry, with the HTTP status the service answers', () => {
    for (const code of PROBLEM_CODES) {
      const cells = row(errors, `\`${code}\``);
      expect(cells, `no row for ${code}`).toBeDefined();
      expect(cells?.[1]?.startsWith(String(statusOf(code))), `${code}: ${cells?.[1]} is not ${statusOf(code)}`).toBe(true);
    }
  });

  it('has a row for every CLI exit status, with its name', () => {
    for (const [name, status] of Object.entries(EXIT)) {
      expect(row(errors, String(status))?.[1], `exit status ${status}`).toBe(`\`${name}\``);
    }
  });
});

describe('docs/reference/configuration.md', () => {
  const configuration = page('docs/reference/configuration.md');

  it('lists every store URL form', () => {
    for (const form of STORE_URL_FORMS) expect(configuration).toContain(`\`${form}\``);
  });

  it('has a row for every serve setting with its environment variable and default', () => {
    for (const setting of SERVE_SETTINGS) {
      const cells = row(configuration, `\`${setting.flag} ${setting.value}\``);
      expect(cells, `no row for ${setting.flag}`).toBeDefined();
      expect(cells?.[1]).toBe(`\`${setting.env}\``);
      expect(cells?.[2], setting.flag).toContain(setting.shownDefault);
    }
  });

  it('names every other QUOTAPLANE_* variable quotaplane reads', () => {
    for (const name of OTHER_KNOWN_ENV) expect(row(configuration, `\`${name}\``), name).toBeDefined();
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SERVE_SETTINGS } from '../../src/cli/serve/serve-settings.js';
import { pagesContaining } from '../docs/markdown.js';
import { HEADER, REPO_ROOT, runCli, temporaryDirectory, writeTrace } from './cli-helpers.js';

// The README and the docs pages say what the program does. A table or sample that moves between
// pages is found where it is (every page carrying it is checked; at least one must).

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const SETTINGS_HEADER = '| flag | environment variable | default | unit | what it sets |';
const REPLAY_SAMPLE = 'invariants (measured from the store):';

describe('the README and the docs are true to the program', () => {
  it("the table of serve's settings lists exactly the flags of `serve --help`, each with its variable, default and unit", async () => {
    const help = (await runCli(['serve', '--help'])).stdout.replace(/\s+/g, ' ');
    const pages = pagesContaining(SETTINGS_HEADER);
    expect(pages.map(({ page }) => page)).not.toEqual([]);
    for (const { text } of pages) checkSettingsTable(text.slice(text.indexOf(SETTINGS_HEADER)), help);
  });

  it('the replay sample shows every invariant the replay measures (six), in its order', async () => {
    const dir = temporaryDirectory();
    try {
      const trace = writeTrace(dir.path, 'tiny.csv', [HEADER, '2023-11-16 18:15:46.6805900,374,44', '2023-11-16 18:15:50.9951690,396,109']);
      const replay = await runCli(['replay', trace, '--json']);
      const measured = Object.keys(JSON.parse(replay.stdout).invariants as Record<string, boolean>);
      expect(measured).toHaveLength(6);
      const pages = pagesContaining(REPLAY_SAMPLE);
      expect(pages.map(({ page }) => page)).not.toEqual([]);
      for (const { text } of pages) {
        const block = text.slice(text.indexOf(REPLAY_SAMPLE), text.indexOf('every invariant holds'));
        expect([...block.matchAll(/^ {2}(\w+) +true$/gm)].map((match) => match[1])).toEqual(measured);
        expect(text).toContain('and six invariants');
      }
    } finally {
      dir.remove();
    }
  });

  it('keys create --help no longer says --store is SQLite-only, and names working through a server', async () => {
    const help = (await runCli(['keys', 'create', '--help'])).stdout;
    expect(help).not.toMatch(/sqlite:<path> or <path>\.db \(/);
    expect(help).toMatch(/postgres:\/\//);
    expect(help).toMatch(/--url <url>/);
  });

  it('the quick start settles the run it admits, and says why an unsettled run turns stranded', () => {
    const start = README.slice(README.indexOf('## Start'), README.indexOf('## Library usage'));
    expect(start).toContain('/v1/runs/run-1/settle');
    expect(start).toMatch(/marked `stranded`/);
  });
});

/** Checks one settings table (from its header on) row by row against `serve --help`, spaces collapsed. */
function checkSettingsTable(section: string, help: string): void {
  const rows = [...section.matchAll(/^\| `(--[a-z-]+) (<[a-z]+>)` \| `(QUOTAPLANE_[A-Z_]+)` \| `([^`]+)` \| ([^|]+) \|/gm)].map((match) => ({
    flag: match[1] ?? '',
    value: match[2] ?? '',
    env: match[3] ?? '',
    shownDefault: match[4] ?? '',
    unit: (match[5] ?? '').trim(),
  }));
  const flagsInHelp = [...help.matchAll(/ (--[a-z-]+) <[a-z]+>/g)].map((match) => match[1]);
  expect(rows.map((row) => row.flag)).toEqual(flagsInHelp);
  expect(rows).toHaveLength(SERVE_SETTINGS.length);
  for (const row of rows) {
    const unit = row.unit === '–' ? '' : ` ${row.unit}`;
    expect(help).toContain(`${row.flag} ${row.value}`);
    expect(help).toContain(`(env ${row.env}; default ${row.shownDefault}${unit})`);
  }
}

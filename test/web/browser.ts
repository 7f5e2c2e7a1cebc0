import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Environment variable naming a Chromium (or Chrome) binary for the browser tests. */
export const CHROMIUM_ENV = 'QUOTAPLANE_CHROMIUM';

/**
 * Flags of @sparticuz/chromium's recommended set that weaken the page's security model; the
 * dashboard tests check the Content-Security-Policy and hostile text, so they run without them.
 */
const WEAKENING_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);
/** A flag of that set that ties the browser's life to its first page: closing a test's context would end the browser. */
const SINGLE_PROCESS = '--single-process';

/**
 * Launches a headless Chromium for the dashboard tests (issue #11), with no browser downloader and
 * no system package step: the binary named by `QUOTAPLANE_CHROMIUM`, else a `chromium` (or
 * `chromium-browser`) on PATH, else the one inside the `@sparticuz/chromium` devDependency, which
 * unpacks into /tmp on first use (its recommended flags, minus {@link WEAKENING_FLAGS} and `--single-process`).
 */
export async function launchChromium(): Promise<Browser> {
  const named = process.env[CHROMIUM_ENV];
  if (named !== undefined && named !== '') {
    if (!existsSync(named)) throw new Error(`${CHROMIUM_ENV} names ${named}, which does not exist`);
    return chromium.launch({ executablePath: named, headless: true, args: ['--no-sandbox'] });
  }
  const onPath = findOnPath(['chromium', 'chromium-browser']);
  if (onPath !== null) return chromium.launch({ executablePath: onPath, headless: true, args: ['--no-sandbox'] });

  const { default: sparticuz } = await import('@sparticuz/chromium');
  const executablePath = await sparticuz.executablePath();
  const args = sparticuz.args.filter((flag) => !WEAKENING_FLAGS.has(flag) && flag !== SINGLE_PROCESS);
  return chromium.launch({ executablePath, headless: true, args });
}

function findOnPath(names: readonly string[]): string | null {
  for (const name of names) {
    try {
      const found = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (found !== '') return found;
    } catch {
      // not on PATH
    }
  }
  return null;
}

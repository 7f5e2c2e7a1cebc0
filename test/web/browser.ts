import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
 * Launches a headless Chromium for the dashboard tests, with no browser downloader and no system
 * package step: the binary named by `QUOTAPLANE_CHROMIUM`, else a `chromium` (or
 * `chromium-browser`) on PATH, else the one inside the `@sparticuz/chromium` devDependency,
 * unpacked once by {@link unpackedSparticuz} (its recommended flags, minus {@link WEAKENING_FLAGS}
 * and `--single-process`).
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
  const executablePath = await unpackedSparticuz(() => sparticuz.executablePath());
  const args = sparticuz.args.filter((flag) => !WEAKENING_FLAGS.has(flag) && flag !== SINGLE_PROCESS);
  return chromium.launch({ executablePath, headless: true, args });
}

/**
 * The path of @sparticuz/chromium's binary, unpacked into a directory of its own under the system
 * temporary directory, named after the package's version. Left to itself the package unpacks into
 * `/tmp/chromium` and reuses any file of that name, so two test processes unpacking at once, or an
 * unpacking cut short, leave a truncated binary that every later run launches and fails on. Here
 * each unpacking goes into a fresh staging directory (the package unpacks into `os.tmpdir()`, which
 * follows `$TMPDIR`), and only a complete one is renamed into place: the rename is atomic, so a
 * directory that exists holds a whole browser; a process that loses the race drops its own copy.
 */
async function unpackedSparticuz(unpack: () => Promise<string>): Promise<string> {
  const manifest = new URL('../../node_modules/@sparticuz/chromium/package.json', import.meta.url);
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const home = join(tmpdir(), `quotaplane-sparticuz-chromium-${version}`);
  const binary = join(home, 'chromium');
  if (existsSync(binary)) return binary;

  const staging = mkdtempSync(join(tmpdir(), 'quotaplane-sparticuz-staging-'));
  const savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    await unpack();
  } finally {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
  }
  try {
    renameSync(staging, home);
  } catch (error) {
    // Another process put a whole copy in place first: use it and drop ours.
    if (!existsSync(binary)) throw error;
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
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

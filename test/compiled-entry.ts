import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { build, type Plugin } from 'esbuild';

/**
 * Where compiled entries are kept: inside the repository, so that the packages left out of a
 * bundle resolve from its node_modules. `npm test` empties it before each run.
 */
export const COMPILED_ENTRIES_DIR = join(import.meta.dirname, '..', '.test-results', 'entries');

const compiled = new Map<string, Promise<string>>();

/**
 * A TypeScript entry point a test starts as an OS process (a race worker, the CLI's bin), compiled
 * from the current sources into one ES module that plain `node` runs: `fork(await
 * compiledEntry(path), args, { execArgv: [] })`. Starting a process through `--import tsx` compiles
 * every source file it loads again, in every process (about a second of CPU each); this compiles
 * them once per test file, and a bundle already written for the same sources is reused.
 *
 * The code is the same: esbuild compiles it either way (tsx uses it too), packages stay outside
 * the bundle, each file's `import.meta.url` keeps naming that file (so paths relative to a source
 * file, package.json or dist/web, resolve as they do under tsx), and a dynamic import of a module
 * named by a constant of the same file (open-store.ts loads the PostgreSQL adapter so) is bundled,
 * still loaded only when reached. Resolves with the path of the compiled module; rejects with
 * esbuild's errors.
 */
export function compiledEntry(entry: string): Promise<string> {
  let pending = compiled.get(entry);
  if (pending === undefined) {
    pending = compile(entry);
    compiled.set(entry, pending);
  }
  return pending;
}

async function compile(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'silent',
    plugins: [asUnderTsx],
  });
  const code = result.outputFiles[0]?.contents;
  if (code === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  const digest = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const path = join(COMPILED_ENTRIES_DIR, `${basename(entry).replace(/\.[cm]?ts$/, '')}-${digest}.mjs`);
  if (!existsSync(path)) {
    // Written whole under another name, then renamed: a process never starts a half-written file.
    mkdirSync(COMPILED_ENTRIES_DIR, { recursive: true });
    const partial = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.partial`;
    writeFileSync(partial, code);
    renameSync(partial, path);
  }
  return path;
}

// Each source file as tsx would run it from its own place: its own URL for `import.meta.url`
// (in a bundle it would name the bundle), and `import(NAME)` of a `const NAME = '<specifier>'`
// of the same file as `import('<specifier>')`, which esbuild can follow into the bundle.
const asUnderTsx: Plugin = {
  name: 'as-under-tsx',
  setup(builder) {
    builder.onLoad({ filter: /\.[cm]?ts$/ }, ({ path }) => {
      let contents = readFileSync(path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href));
      for (const [, name, specifier] of contents.matchAll(/^const (\w+) = ('[^'\n]+');$/gm)) {
        contents = contents.replaceAll(`import(${name})`, `import(${specifier})`);
      }
      return { contents, loader: 'ts' };
    });
  },
};

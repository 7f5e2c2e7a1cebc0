#!/usr/bin/env node
// Builds the operator dashboard (docs/guides/operating.md#the-operator-dashboard) from web/ into
// dist/web/: one JavaScript bundle and one stylesheet (preact, htm and uPlot included, so nothing
// is fetched from a CDN at run time) and index.html. `npm run build` runs it after tsc; `serve`
// reads dist/web/ at start.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: { app: join(root, 'web', 'src', 'main.js') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  outdir: out,
  legalComments: 'eof',
  logLevel: 'warning',
});
await build({
  entryPoints: { app: join(root, 'web', 'src', 'app.css') },
  bundle: true,
  minify: true,
  outdir: out,
  logLevel: 'warning',
});
copyFileSync(join(root, 'web', 'index.html'), join(out, 'index.html'));

for (const name of ['index.html', 'app.js', 'app.css']) {
  console.log(`dist/web/${name}  ${(statSync(join(out, name)).size / 1024).toFixed(1)} KiB`);
}

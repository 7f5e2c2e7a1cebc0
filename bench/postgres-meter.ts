import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

import type { SliceMeter } from './bench-types.js';
import { processTreeCpuUs } from './process-tree-cpu.js';

/** Marks the meter's own queries, so the statement counts leave them out. */
const OBSERVER = '/* bench-observer */';

/**
 * Where the PostgreSQL section's statement counts come from: pg_stat_statements (top-level and
 * nested statements, BEGIN and COMMIT included) when the server has it loaded, otherwise the
 * queries this process sent through `pg` (top-level only; one query may hold several statements).
 */
export type StatementSource = 'pg_stat_statements' | 'client queries';

/**
 * Reads, per slice: the server's WAL position (`pg_current_wal_lsn()`, as bytes from 0/0 by
 * `pg_wal_lsn_diff`), the CPU of the postmaster and its children from /proc (when the server runs
 * on this machine and its data directory is readable), statements run, and this process's CPU.
 * Works on its own connection `observer`, whose queries are not counted.
 */
export async function postgresMeter(observer: pg.Client): Promise<{ meter: SliceMeter; statementSource: StatementSource; serverCpu: boolean }> {
  const postmasterPid = await findPostmaster(observer);
  const statementSource = (await hasStatementStatistics(observer)) ? 'pg_stat_statements' : 'client queries';
  const clientQueries = statementSource === 'client queries' ? countClientQueries(observer) : null;
  const meter: SliceMeter = {
    async read() {
      const wal = await observer.query<{ wal: number }>(`SELECT ${OBSERVER} pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal`);
      const counters: Record<string, number> = { walBytes: Number(wal.rows[0]?.wal) };
      if (clientQueries !== null) {
        counters.statements = clientQueries.count;
      } else {
        const statements = await observer.query<{ top: number; every: number }>(
          `SELECT ${OBSERVER} coalesce(sum(calls) FILTER (WHERE toplevel), 0)::float8 AS top, coalesce(sum(calls), 0)::float8 AS every
             FROM pg_stat_statements WHERE query NOT LIKE '%bench-observer%'`,
        );
        counters.statements = Number(statements.rows[0]?.top);
        counters.allStatements = Number(statements.rows[0]?.every);
      }
      const serverCpuUs = postmasterPid === null ? null : processTreeCpuUs(postmasterPid);
      if (serverCpuUs !== null) counters.serverCpuUs = serverCpuUs;
      const node = process.cpuUsage();
      counters.nodeCpuUs = node.user + node.system;
      return counters;
    },
  };
  return { meter, statementSource, serverCpu: postmasterPid !== null && processTreeCpuUs(postmasterPid) !== null };
}

/** The postmaster's PID from `postmaster.pid` in the server's data directory, or null when it cannot be read here. */
async function findPostmaster(observer: pg.Client): Promise<number | null> {
  try {
    const result = await observer.query<{ setting: string }>(`SELECT ${OBSERVER} setting FROM pg_settings WHERE name = 'data_directory'`);
    const dataDir = result.rows[0]?.setting;
    if (dataDir === undefined) return null;
    const pid = Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
    return Number.isSafeInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether pg_stat_statements answers (it needs `shared_preload_libraries`); creates the extension if it may. */
async function hasStatementStatistics(observer: pg.Client): Promise<boolean> {
  try {
    await observer.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await observer.query(`SELECT ${OBSERVER} count(*) FROM pg_stat_statements`);
    return true;
  } catch {
    return false;
  }
}

/** Counts every query sent through `pg` in this process except the observer's own. */
function countClientQueries(observer: pg.Client): { readonly count: number } {
  const counter = { count: 0 };
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function counted(this: unknown, ...args: unknown[]) {
    if (this !== observer) counter.count += 1;
    return query.apply(this, args);
  };
  return counter;
}

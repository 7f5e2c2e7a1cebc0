import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import type { CallerCall } from './concurrent-loop.js';
import { admissionCycle, quotaplanePoolSize, rateLimiterConsume, type Shape } from './postgres-section.js';
import { loadStatementStatistics } from './postgres-statement-statistics.js';

// `npx tsx bench/postgres-profile.ts [--callers 1,8] [--cycles 2000] [--explain] [--quotaplane-only] [--rate]
// [--cpu-prof <dir>]`: where a PostgreSQL admission cycle's work goes, next to
// rate-limiter-flexible's consume(), on a durable embedded server. Per decision: statements
// (pg_stat_statements, nested ones too), WAL records and the relations whose blocks they touch
// (pg_walinspect), and server CPU by process. --explain: auto_explain reports every statement's
// plan with ANALYZE (nested ones too) as a notice, and those of the measured run are printed.
// --cpu-prof: a V8 CPU profile of each measured run (not the set-up) into <dir>, for Chrome
// DevTools. --quotaplane-only leaves the peer out; --rate profiles one caller's reserveRate instead. A diagnosis tool, not a benchmark: its times
// are noisy on a shared machine, its counts are not. docs/benchmarks-postgres-profile.md reads it.

const { values } = parseArgs({
  options: {
    callers: { type: 'string', default: '1,8' },
    cycles: { type: 'string', default: '2000' },
    explain: { type: 'boolean', default: false },
    'quotaplane-only': { type: 'boolean', default: false },
    rate: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});
const callerCounts = values.callers.split(',').map(Number);
const totalCalls = Number(values.cycles);

/** auto_explain for every statement, nested ones too, with ANALYZE, sent to the client as a notice. */
const EXPLAIN_SETTINGS: Readonly<Record<string, string>> = {
  shared_preload_libraries: 'pg_stat_statements,auto_explain',
  'auto_explain.log_min_duration': '0',
  'auto_explain.log_analyze': 'on',
  'auto_explain.log_nested_statements': 'on',
  'auto_explain.log_buffers': 'on',
  'auto_explain.log_wal': 'on',
  'auto_explain.log_level': 'notice',
};

const plans: string[] = [];
if (values.explain) collectNotices(plans);

const server = await startEmbeddedServer('bench-profile', { durable: true });
try {
  await loadStatementStatistics(server, values.explain ? EXPLAIN_SETTINGS : {});
  const observer = new pg.Client({ connectionString: server.url });
  await observer.connect();
  observer.on('error', () => undefined); // The server stopping at the end ends it.
  await observer.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  await observer.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await observer.query('CREATE SCHEMA rlf_profile');
  process.stderr.write('profile: server ready\n');
  const postmaster = Number.parseInt(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
  if (values.rate) {
    // One caller's reserveRate on an empty window: one decision per call.
    const store = await openPostgresStore(server.url, { schema: 'qp_profile_rate' });
    const handle = store.tenant('profile-rate');
    let next = 0;
    await profile(observer, postmaster, 'quotaplane reserveRate, 1 caller', async () => {
      next += 1;
      const ceilings = [{ count: 10_000_000, windowSeconds: 86_400 }];
      const outcome = await handle.reserveRate({ grant: 'tool://profile', run: 'profile', dispatch: `d${next}`, ceilings, atMs: Date.now(), exempt: false });
      if (!outcome.ok) throw new Error(`the profile dispatch was refused: ${outcome.refusal.code}`);
      return 0;
    }, 1, 1);
    await store.close();
  }
  for (const callers of values.rate ? [] : callerCounts) {
    const shape: Shape = { label: `${callers} caller(s)`, callers, tenants: callers };
    const store = await openPostgresStore(server.url, { schema: `qp_profile_${callers}`, poolSize: quotaplanePoolSize(callers) });
    const peerPool = new pg.Pool({ connectionString: server.url, max: callers });
    try {
      const tag = `p${callers}`;
      await profile(observer, postmaster, `quotaplane admit + settle, ${shape.label}`, await admissionCycle(store, tag, shape), callers, 2);
      if (values['quotaplane-only']) continue;
      await profile(observer, postmaster, `rate-limiter-flexible consume(), ${shape.label}`, await rateLimiterConsume(peerPool, 'rlf_profile', tag, shape), callers, 1);
    } finally {
      await peerPool.end();
      await store.close();
    }
  }
  await observer.end();
} catch (error) {
  process.stderr.write(`profile: ${(error as Error).stack}\n`);
  process.exitCode = 1;
} finally {
  await server.dispose();
}


/** Keeps every notice any `pg` client of this process receives (the store's pool is not reachable otherwise). */
function collectNotices(into: string[]): void {
  const prototype = pg.Client.prototype as unknown as { emit: (event: string, ...args: unknown[]) => boolean };
  const emit = prototype.emit;
  prototype.emit = function kept(this: unknown, event: string, ...args: unknown[]) {
    if (event === 'notice') into.push(String((args[0] as { message?: unknown }).message));
    return emit.call(this, event, ...args);
  };
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Runs `totalCalls` calls over `callers` callers after a warm-up, and prints what they cost per decision. */
async function profile(observer: pg.Client, postmaster: number, label: string, call: CallerCall, callers: number, decisionsPerCall: number): Promise<void> {
  const run = async (calls: number): Promise<void> => {
    let left = calls;
    await Promise.all(Array.from({ length: callers }, async (_, caller) => {
      while (left > 0) {
        left -= 1;
        await call(caller);
      }
    }));
  };
  process.stderr.write(`profile: ${label}\n`);
  await run(Math.max(100, callers * 20));
  await observer.query('SELECT pg_stat_statements_reset()');
  plans.length = 0;
  const before = (await observer.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn as string;
  const cpuBefore = perProcessCpuUs(postmaster);
  const nodeBefore = process.cpuUsage();
  const inspector = values['cpu-prof'] === undefined ? null : new Session();
  if (inspector !== null) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.start');
  }
  const started = performance.now();
  await run(totalCalls);
  const wallMs = performance.now() - started;
  if (inspector !== null) {
    const { profile: cpuProfile } = await inspector.post('Profiler.stop');
    const file = join(values['cpu-prof'] as string, `${label.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(cpuProfile));
    inspector.disconnect();
    print(`CPU profile: ${file}`);
  }
  const node = process.cpuUsage(nodeBefore);
  const cpuAfter = perProcessCpuUs(postmaster);
  const after = (await observer.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn as string;
  const decisions = totalCalls * decisionsPerCall;

  print(`\n## ${label}: ${totalCalls} calls, ${decisions} decisions, ${(wallMs / 1000).toFixed(2)} s wall\n`);
  print(`Node CPU per decision: ${((node.user + node.system) / decisions).toFixed(0)} µs`);
  if (values.explain) print(`\nPlans of the measured run (auto_explain):\n\n\`\`\`\n${plans.join('\n\n')}\n\`\`\``);
  print('\nServer CPU per decision by process (µs, /proc; 10 ms ticks):\n');
  print('| process | µs/decision |\n|---|---|');
  for (const [name, us] of Object.entries(cpuAfter)) {
    const spent = us - (cpuBefore[name] ?? 0);
    if (spent > 0) print(`| ${name} | ${(spent / decisions).toFixed(0)} |`);
  }
  const statements = await observer.query(
    `SELECT toplevel, calls, rows, total_exec_time, wal_records, wal_bytes, wal_fpi, shared_blks_hit, shared_blks_dirtied, shared_blks_written,
            regexp_replace(left(query, 110), '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_current_wal_lsn%' ORDER BY total_exec_time DESC LIMIT 60`,
  );
  print('\nStatements (pg_stat_statements, track = all; a top-level call\'s time and WAL include its nested statements):\n');
  print('| top | calls/decision | rows/call | mean µs | µs/decision | WAL records/decision | WAL bytes/decision | FPI/decision | blocks hit/decision | dirtied/decision | statement |');
  print('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of statements.rows as Record<string, unknown>[]) {
    const calls = Number(row.calls);
    const per = (value: unknown, digits = 1): string => (Number(value) / decisions).toFixed(digits);
    print(
      `| ${row.toplevel ? 'y' : ''} | ${per(calls, 2)} | ${(Number(row.rows) / calls).toFixed(1)} | ${((Number(row.total_exec_time) * 1000) / calls).toFixed(0)} | ${per(Number(row.total_exec_time) * 1000, 0)} | ${per(row.wal_records, 2)} | ${per(row.wal_bytes, 0)} | ${per(row.wal_fpi, 2)} | ${per(row.shared_blks_hit, 1)} | ${per(row.shared_blks_dirtied, 2)} | \`${String(row.query).replaceAll('|', '\\|')}\` |`,
    );
  }
  const wal = await observer.query(
    `SELECT "resource_manager/record_type" AS record, count, round(combined_size::numeric / $3, 0) AS bytes
       FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY combined_size DESC`,
    [before, after, decisions],
  );
  const walTotal = (await observer.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text AS bytes', [before, after])).rows[0]?.bytes;
  print(`\nWAL (pg_walinspect): ${(Number(walTotal) / decisions).toFixed(0)} bytes per decision; records per decision by type:\n`);
  print('| record | per decision | bytes/decision |\n|---|---|---|');
  for (const row of wal.rows as Record<string, unknown>[]) print(`| ${String(row.record)} | ${(Number(row.count) / decisions).toFixed(2)} | ${String(row.bytes)} |`);
  const blocks = await observer.query(
    `SELECT coalesce(pg_filenode_relation(b.reltablespace, b.relfilenode)::regclass::text, b.relfilenode::text) AS relation,
            b.resource_manager || '/' || b.record_type AS record, count(*) AS count, count(DISTINCT b.xid::text) AS transactions
       FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false) AS b
      WHERE b.relforknumber = 0
      GROUP BY 1, 2 ORDER BY 3 DESC`,
    [before, after],
  );
  print('\nBlock changes in the WAL by relation (main fork; heap = table, Btree = index):\n');
  print('| relation | record | per decision |\n|---|---|---|');
  for (const row of blocks.rows as Record<string, unknown>[]) {
    print(`| ${String(row.relation)} | ${String(row.record)} | ${(Number(row.count) / decisions).toFixed(2)} |`);
  }
  const perTransaction = await observer.query(
    `SELECT count(*) AS transactions, avg(relations) AS relations, avg(btrees) AS btrees FROM (
       SELECT b.xid::text, count(DISTINCT b.relfilenode) AS relations, count(DISTINCT b.relfilenode) FILTER (WHERE b.resource_manager = 'Btree') AS btrees
         FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false) AS b WHERE b.xid::text <> '0' AND b.relforknumber = 0 GROUP BY b.xid::text) AS t`,
    [before, after],
  );
  const t = perTransaction.rows[0] as Record<string, unknown>;
  print(
    `\nTransaction IDs that wrote (a subtransaction has its own): ${(Number(t.transactions) / decisions).toFixed(2)} per decision; each touched ${Number(t.relations).toFixed(1)} relations, of them ${Number(t.btrees).toFixed(1)} B-trees (by WAL records).`,
  );
  // With one caller each transaction is one decision, so the kinds below are admit and settle apart.
  const kinds = await observer.query(
    `SELECT count(*) AS transactions, kind FROM (
       SELECT xid, string_agg(relation || ' ' || record || ' ×' || n, ', ' ORDER BY relation, record) AS kind FROM (
         SELECT b.xid::text AS xid, coalesce(pg_filenode_relation(b.reltablespace, b.relfilenode)::regclass::text, b.relfilenode::text) AS relation,
                b.resource_manager || '/' || b.record_type AS record, count(*) AS n
           FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false) AS b
          WHERE b.xid::text <> '0' AND b.relforknumber = 0 AND b.resource_manager <> 'Heap2'
          GROUP BY 1, 2, 3) AS r GROUP BY xid) AS k
      GROUP BY kind ORDER BY 1 DESC LIMIT 4`,
    [before, after],
  );
  print('\nThe commonest kinds of writing transaction (the block changes each made, pruning left out):\n');
  print('| transactions/decision | block changes |\n|---|---|');
  for (const row of kinds.rows as Record<string, unknown>[]) print(`| ${(Number(row.transactions) / decisions).toFixed(2)} | ${String(row.kind)} |`);
}

/** CPU µs so far of the postmaster and each child, keyed by its title (backends summed as one). */
function perProcessCpuUs(postmaster: number): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    let title: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    if (pid !== postmaster && Number(fields[1]) !== postmaster) continue;
    const name = pid === postmaster ? 'postmaster (with exited children)' : /postgres: postgres postgres/.test(title) ? 'client backends' : title.replace(/^postgres: /, '');
    const ticks = Number(fields[11]) + Number(fields[12]) + (pid === postmaster ? Number(fields[13]) + Number(fields[14]) : 0);
    byName[name] = (byName[name] ?? 0) + ticks * 10_000; // 100 ticks a second (getconf CLK_TCK here)
  }
  return byName;
}

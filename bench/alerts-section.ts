import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { openStore } from '../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../src/store/store.js';
import { startEmbeddedServer, type EmbeddedServer } from '../test/postgres/embedded-server.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, concurrentRow, type ConcurrentResult, quantileMs } from './concurrent-loop.js';

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2027, 0, 1);
const CALLERS = [1, 16] as const;

/**
 * The alerts section: what a settle that crosses a spend threshold costs next to one that does not
 * (docs/design/rules.md#e3; the target is at most 10 % more), on a SQLite file and on an embedded,
 * durable PostgreSQL, interleaved. Each measured call admits a run holding 90 tokens in a day of
 * its own under a daily ceiling of 100 (untimed) and settles it (timed): 90 tokens cross 80 % and
 * write one event, 50 cross nothing. A fresh day per call keeps every crossing a first.
 */
export const alertsSection: BenchSection = {
  name: 'alerts',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-alerts-'));
    let server: EmbeddedServer | null = null;
    try {
      const sqlite = await openStore(`sqlite:${join(directory, 'alerts.db')}`);
      try {
        rows.push(...(await measure(context, sqlite, 'sqlite file')));
      } finally {
        await sqlite.close();
      }
      if (!context.quick) {
        context.log('alerts: starting an embedded PostgreSQL server (durable)');
        server = await startEmbeddedServer('bench-alerts', { durable: true });
        const postgres = await openStore(server.url, { schema: 'quotaplane_bench_alerts' });
        try {
          rows.push(...(await measure(context, postgres, 'postgres')));
        } finally {
          await postgres.close();
        }
      }
    } finally {
      await server?.dispose();
      await rm(directory, { recursive: true, force: true });
    }
    return rows;
  },
};

async function measure(context: BenchContext, store: QuotaStore, label: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const audit = { atMs: T0, by: { actor: 'bench', basis: 'asserted' as const }, action: 'quota.set', subject: 'quota', detail: {} };
  const crossing = store.tenant('bench-crossing');
  const quiet = store.tenant('bench-quiet');
  for (const handle of [crossing, quiet]) await handle.setQuota({ period: 'daily', maxTokensPerPeriod: 100 }, audit);
  let day = 0;
  const settleIn = (handle: TenantStore, tokens: number): CallerCall => async () => {
    day += 1;
    const atMs = T0 + day * DAY_MS;
    const run = `run-${day}`;
    const admitted = await handle.admit({ run, budget: { maxTokens: 90, maxCallTokens: 0 }, width: 0, atMs, leaseMs: 60_000 });
    if (!admitted.ok) throw new Error(`the bench admission was refused: ${admitted.refusal.code}`);
    const started = performance.now();
    const settled = await handle.settlePass({ run, epoch: 1, spend: { tokens, minorUnits: 0 }, concludes: true, atMs: atMs + 1 });
    if (settled.outcome !== 'settled') throw new Error('the bench settle did not settle');
    return performance.now() - started;
  };
  for (const callers of CALLERS) {
    context.log(`alerts: ${label}, ${callers} caller(s)`);
    const [crossed, calm] = (await concurrentInterleavedLoops([settleIn(crossing, 90), settleIn(quiet, 50)], callers, context.loopMs, 5, 20)) as [ConcurrentResult, ConcurrentResult];
    const p50 = (result: ConcurrentResult) => quantileMs(result.latenciesMs, 0.5);
    const ratio = p50(crossed) / p50(calm);
    rows.push(
      concurrentRow('alerts', `${label}, ${callers} caller(s): settle crossing 80 % (one event)`, crossed, null, 'settle', `${ratio.toFixed(2)}× the p50 of a settle crossing nothing`),
      concurrentRow('alerts', `${label}, ${callers} caller(s): settle crossing nothing`, calm, null, 'settle', 'beside it, interleaved'),
    );
  }
  if (store.eventsAfter !== undefined) {
    const written = await store.eventsAfter(0, 1_000_000, 'bench-crossing');
    context.log(`alerts: ${label}: ${written.length} events written`);
  }
  return rows;
}

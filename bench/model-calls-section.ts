import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import type { CallCeilings } from '../src/core/call-ceilings.js';
import { createPlane, type Plane } from '../src/index.js';
import { openStore } from '../src/store/open-store.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, concurrentRow, type ConcurrentResult, quantileMs } from './concurrent-loop.js';
import { sqliteMeter } from './sqlite-meter.js';
import { openRateLimiterPeer } from './sqlite-peer.js';

/** Concurrent callers of the durable part. */
export const MODEL_CALL_CALLERS = [1, 8, 64] as const;

/** Calls booked into the full window before its decisions are measured, 10 tokens each: a million tokens. */
export const FULL_WINDOW_CALLS = 100_000;

// Ceilings far above what a loop reaches, over three meters a call counts on (the tenant, its
// model, its end user), so every decision reads and writes each.
const CEILINGS: CallCeilings = {
  tenant: [{ unit: 'tokens', limit: 1_000_000_000_000, windowSeconds: 86_400 }, { unit: 'requests', limit: 1_000_000_000, windowSeconds: 60 }],
  models: { 'bench-model': [{ unit: 'tokens', limit: 1_000_000_000_000, windowSeconds: 3_600 }] },
  endUsers: { default: [{ unit: 'tokens', limit: 1_000_000_000_000, windowSeconds: 3_600 }] },
};

/**
 * The model-call section: a reserve plus an adjust (two durable decisions) from 1, 8 and 64
 * concurrent callers on a durable SQLite file, each caller its own tenant, beside
 * rate-limiter-flexible's `consume()` from as many callers; then, in memory, the same pair on a
 * tenant whose day window already holds a million tokens (100,000 calls) beside one whose window is
 * empty, interleaved, so the ratio is the cost of what the window holds. `--quick` runs 1 and 8
 * callers and a 10,000-call fill.
 */
export const modelCallsSection: BenchSection = {
  name: 'model-calls',
  async run(context: BenchContext): Promise<BenchRow[]> {
    return [...(await durable(context)), ...(await fullWindow(context))];
  },
};

async function durable(context: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const meter = sqliteMeter();
  for (const callers of context.quick ? MODEL_CALL_CALLERS.filter((count) => count <= 8) : MODEL_CALL_CALLERS) {
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-calls-'));
    const store = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
    const peer = await openRateLimiterPeer(join(directory, 'rate-limiter-flexible.db'));
    try {
      context.log(`model-calls: ${callers} caller(s), reserve + adjust and rate-limiter-flexible consume(), interleaved`);
      const plane = createPlane({ store });
      const tenants = Array.from({ length: callers }, (_, caller) => `bench-${caller}`);
      for (const tenant of tenants) await plane.setCallCeilings(tenant, CEILINGS, { newTenant: true });
      const cycle: CallerCall = async (caller) => reserveAndAdjust(plane, tenants[caller] as string);
      const consume: CallerCall = async (caller) => {
        const started = performance.now();
        await peer.limiter.consume(`bench-${caller}`, 1);
        return performance.now() - started;
      };
      const [cycles, consumes] = (await concurrentInterleavedLoops([cycle, consume], callers, context.loopMs, 5, 20, meter)) as [ConcurrentResult, ConcurrentResult];
      const ratio = cycles.operations / cycles.seconds / (consumes.operations / consumes.seconds);
      rows.push(
        concurrentRow('model-calls', `quotaplane reserveCall + adjustCall, ${callers} caller(s)`, cycles, 2, 'reserve + adjust', `${ratio.toFixed(2)}× rlf consumes/s; 3 meters a call, group commit, WAL, synchronous=FULL`),
        concurrentRow('model-calls', `rate-limiter-flexible consume(), ${callers} caller(s)`, consumes, 1, 'consume', 'RateLimiterSQLite, same pragmas'),
      );
    } finally {
      peer.db.close();
      await store.close();
      await rm(directory, { recursive: true, force: true });
    }
  }
  return rows;
}

async function fullWindow(context: BenchContext): Promise<BenchRow[]> {
  const store = await openStore('sqlite::memory:');
  try {
    const plane = createPlane({ store });
    for (const tenant of ['empty', 'full']) await plane.setCallCeilings(tenant, CEILINGS, { newTenant: true });
    const fill = context.quick ? FULL_WINDOW_CALLS / 10 : FULL_WINDOW_CALLS;
    context.log(`model-calls: booking ${fill} calls of 10 tokens into one tenant's window`);
    const startMs = Date.now() - 3_000_000;
    const chunk = 1000;
    for (let done = 0; done < fill; done += chunk) {
      await Promise.all(
        Array.from({ length: Math.min(chunk, fill - done) }, async (_, index) => {
          const atMs = startMs + Math.floor(((done + index) * 2_900_000) / fill);
          const reserved = await plane.reserveCall({ tenant: 'full', model: 'bench-model', endUser: 'u', inputTokens: 5, maxOutputTokens: 5, atMs });
          if (!reserved.ok) throw new Error('the fill was refused');
          await plane.adjustCall({ tenant: 'full', callId: reserved.call.callId, usage: { inputTokens: 5, outputTokens: 5 }, atMs });
        }),
      );
    }
    const [standing] = await plane.callStandings({ tenant: 'full' });
    context.log(`model-calls: the full tenant's day window counts ${standing?.ceilings[0]?.counted} tokens`);
    const [empty, full] = (await concurrentInterleavedLoops(
      [async () => reserveAndAdjust(plane, 'empty'), async () => reserveAndAdjust(plane, 'full')],
      1,
      context.loopMs,
      5,
      50,
    )) as [ConcurrentResult, ConcurrentResult];
    const ratio = quantileMs(full.latenciesMs, 0.5) / quantileMs(empty.latenciesMs, 0.5);
    return [
      concurrentRow('model-calls', 'quotaplane reserveCall + adjustCall, empty window', empty, 2, 'reserve + adjust', 'in memory, 1 caller'),
      concurrentRow('model-calls', `quotaplane reserveCall + adjustCall, ${(fill * 10).toLocaleString('en-US')} tokens in the window`, full, 2, 'reserve + adjust', `${ratio.toFixed(2)}× the empty window's p50; in memory, 1 caller`),
    ];
  } finally {
    await store.close();
  }
}

// One model call: reserve its worst case (200 prompt tokens and an output cap of 500), then book
// 350. The plane names the call (`call_<ULID>`), as it does for a caller that gives no id.
async function reserveAndAdjust(plane: Plane, tenant: string): Promise<number> {
  const started = performance.now();
  const reserved = await plane.reserveCall({ tenant, model: 'bench-model', endUser: 'u', inputTokens: 200, maxOutputTokens: 500 });
  if (!reserved.ok) throw new Error(`the bench call was refused: ${reserved.refusal.code}`);
  await plane.adjustCall({ tenant, callId: reserved.call.callId, usage: { inputTokens: 200, outputTokens: 150 } });
  return performance.now() - started;
}

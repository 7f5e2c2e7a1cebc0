import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { eventKey } from '../../src/core/events.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE, T0 } from './plane-fixtures.js';

// No missed crossing (docs/design/rules.md#e3–#e5, #e7): whatever the quota, period kind, agents,
// plane default and clock do, every threshold `alerts` shows crossed this period has its event.

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(BACKENDS)('alerts against events, on $name', ({ fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let plane: Plane;
  let clock: ManualClock;

  beforeEach(async () => {
    shared = await fresh('alerts-fuzz');
    store = await openStore(shared.url, shared.options);
    clock = new ManualClock(T0);
    plane = createPlane({ store, clock });
  });

  afterEach(async () => {
    await store.close();
    await shared.remove();
  });

  for (const seed of Array.from({ length: Number(process.env.FUZZ_SEEDS ?? 6) }, (_, i) => i + 1)) {
    it(`E3/E5 every crossed threshold has its event (seed ${seed})`, async () => {
      const rnd = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;
      const thresholds = () => pick([undefined, [], [{ percent: 50 }], [{ percent: 80 }, { percent: 100 }, { percent: 150 }], [{ tokens: 300 }], [{ minorUnits: 200 }, { percent: 90 }]]);
      const quota = () => {
        const q: Record<string, unknown> = { period: pick(['daily', 'monthly']) };
        const t = pick([undefined, 0, 500, 1000, 2000]);
        if (t !== undefined) q.maxTokensPerPeriod = t;
        const m = pick([undefined, 400, 1000]);
        if (m !== undefined) q.maxMinorUnitsPerPeriod = m;
        const a = thresholds();
        if (a !== undefined) q.alertThresholds = a;
        if (rnd() < 0.6) {
          const bot: Record<string, unknown> = {};
          const bt = pick([undefined, 100, 300]);
          if (bt !== undefined) bot.maxTokensPerPeriod = bt;
          const ba = thresholds();
          if (ba !== undefined) bot.alertThresholds = ba;
          q.agents = { bot };
        }
        return q;
      };
      await plane.setQuota('acme', quota() as never, { by: ALICE, newTenant: true });
      const open: { run: string; tokens: number; minor: number }[] = [];
      const log: string[] = [];
      for (let step = 0; step < 40; step += 1) {
        const r = rnd();
        if (r < 0.15) {
          const q = quota();
          log.push(`quota ${JSON.stringify(q)}`);
          await plane.setQuota('acme', q as never, ALICE);
        } else if (r < 0.22) {
          const a = thresholds();
          log.push(`plane ${JSON.stringify(a)}`);
          await plane.setPlaneCeiling(a === undefined ? {} : { alertThresholds: a }, ALICE);
        } else if (r < 0.35) {
          const ms = Math.floor(rnd() * 40) * 3_600_000;
          log.push(`advance ${ms / 3_600_000}h`);
          clock.advance(ms);
        } else if (r < 0.75 || open.length === 0) {
          const run = `run-${step}`;
          const tokens = Math.floor(rnd() * 400);
          const minor = Math.floor(rnd() * 200);
          const agent = pick([undefined, 'bot', 'other']);
          const admitted = await plane.admit({
            tenant: 'acme',
            run,
            ...(agent === undefined ? {} : { agent: { name: agent, digest: 'ab'.repeat(32) } }),
            budget: { maxTokens: tokens + 1, maxCallTokens: 0, maxMinorUnits: minor + 1, maxCallMinorUnits: 0 },
          });
          log.push(`admit ${run} ${agent} ${tokens}/${minor} ${admitted.ok}`);
          if (admitted.ok) open.push({ run, tokens, minor });
        } else {
          const settling = open.splice(Math.floor(rnd() * open.length), 1)[0]!;
          const over = rnd() < 0.3 ? 2 : 1;
          log.push(`settle ${settling.run} x${over}`);
          await plane.settle({ tenant: 'acme', run: settling.run, epoch: 1, spend: { tokens: settling.tokens * over, minorUnits: settling.minor * over }, concludes: true });
        }
        const keys = new Set((await plane.events({ tenant: 'acme', limit: 1000 })).events.map((event) => event.key));
        const status = await plane.alerts({ tenant: 'acme' });
        for (const ceiling of status.ceilings) {
          for (const state of ceiling.thresholds) {
            if (!state.crossed) continue;
            const key = eventKey('threshold.crossed', 'acme', ceiling.agent, ceiling.unit, status.period, state.label);
            expect(keys.has(key), `${key} missing after:\n${log.join('\n')}`).toBe(true);
          }
          if (ceiling.ceiling !== null && ceiling.ceiling > 0 && ceiling.settled >= ceiling.ceiling) {
            const key = eventKey('ceiling.reached', 'acme', ceiling.agent, ceiling.unit, status.period);
            expect(keys.has(key), `${key} missing after:\n${log.join('\n')}`).toBe(true);
          }
        }
      }
    });
  }
});

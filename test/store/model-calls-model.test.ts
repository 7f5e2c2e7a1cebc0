import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { CallCeilings } from '../../src/core/call-ceilings.js';
import { callSubjects, coveringCeilings } from '../../src/core/call-coverage.js';
import type { CallAmounts } from '../../src/core/call-meter.js';
import { openStore } from '../../src/store/open-store.js';

// The model-call decisions against a model that keeps every booking (docs/design/rules.md#m2, #m3):
// random reservations, reports, releases and clock steps (some backwards, as another instance's
// clock would be) on a real SQLite store, each answer compared with what counting every booking
// by hand says. The store judges from prefix sums and one indexed read per ceiling; the model sums
// the window's bookings one by one, so the two agree only if the prefix sums are exact.

const CEILINGS: CallCeilings = {
  tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 10 }],
  models: { m1: [{ unit: 'requests', limit: 3, windowSeconds: 5 }] },
  endUsers: { default: [{ unit: 'tokens', limit: 500, windowSeconds: 20 }] },
  leaseMs: 86_400_000,
};
const T0 = Date.UTC(2026, 0, 10, 12);

type Op =
  | { kind: 'reserve'; model: 'm1' | 'm2'; user: 'u1' | 'u2' | null; input: number; output: number; stepMs: number }
  | { kind: 'adjust'; pick: number; tokens: number | null; stepMs: number }
  | { kind: 'release'; pick: number; stepMs: number };

const step = fc.integer({ min: -1500, max: 3000 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('reserve' as const), model: fc.constantFrom('m1' as const, 'm2' as const), user: fc.constantFrom('u1' as const, 'u2' as const, null), input: fc.integer({ min: 0, max: 300 }), output: fc.integer({ min: 1, max: 300 }), stepMs: step }),
  fc.record({ kind: fc.constant('adjust' as const), pick: fc.nat(), tokens: fc.option(fc.integer({ min: 0, max: 700 })), stepMs: step }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), stepMs: step }),
);

interface Booking {
  readonly atMs: number;
  readonly amounts: CallAmounts;
}

class Model {
  readonly bookings = new Map<string, Booking[]>();
  readonly open = new Map<string, { subjects: string[]; reserved: CallAmounts; deadlineMs: number }>();

  held(subject: string, unit: keyof CallAmounts): number {
    let sum = 0;
    for (const call of this.open.values()) if (call.subjects.includes(subject)) sum += call.reserved[unit];
    return sum;
  }

  counted(subject: string, unit: keyof CallAmounts, windowMs: number, atMs: number): number {
    return (this.bookings.get(subject) ?? []).filter((b) => b.atMs > atMs - windowMs).reduce((sum, b) => sum + b.amounts[unit], 0);
  }

  book(subjects: readonly string[], amounts: CallAmounts, atMs: number): void {
    for (const subject of subjects) {
      const list = this.bookings.get(subject) ?? [];
      const latest = list.at(-1)?.atMs ?? Number.NEGATIVE_INFINITY;
      list.push({ atMs: Math.max(atMs, latest), amounts });
      this.bookings.set(subject, list);
    }
  }
}

describe('model-call decisions against a model that counts every booking', () => {
  it('M2, M3: admissions, refusals, counts and retryAtMs agree with counting each booking', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
        const store = await openStore('sqlite::memory:');
        try {
          const meters = store.callMeters!();
          await meters.setCallCeilings('acme', CEILINGS, T0);
          const model = new Model();
          let atMs = T0;
          let next = 0;
          for (const o of ops) {
            atMs = Math.max(T0, atMs + o.stepMs);
            const openIds = [...model.open.keys()];
            if (o.kind === 'reserve') {
              const callId = `c${(next += 1)}`;
              const parties = { model: o.model, ...(o.user === null ? {} : { endUser: o.user }) };
              const subjects = callSubjects(CEILINGS, parties);
              const reserved = { tokens: o.input + o.output, requests: 1, minorUnits: 0 };
              const full = coveringCeilings(CEILINGS, subjects).filter(({ subject, ceiling }) => {
                const windowMs = 'windowSeconds' in ceiling ? ceiling.windowSeconds * 1000 : 0;
                return model.counted(subject, ceiling.unit, windowMs, atMs) + model.held(subject, ceiling.unit) + reserved[ceiling.unit] > ceiling.limit;
              });
              const outcome = await meters.reserveCall('acme', { callId, ...parties, inputTokens: o.input, maxOutputTokens: o.output, atMs });
              const never = coveringCeilings(CEILINGS, subjects).find(({ ceiling }) => reserved[ceiling.unit] > ceiling.limit);
              if (never !== undefined) {
                expect(outcome.ok ? null : outcome.refusal.code).toBe('CallNeverFits');
                continue;
              }
              expect(outcome.ok, JSON.stringify({ full, outcome })).toBe(full.length === 0);
              if (outcome.ok) {
                model.open.set(callId, { subjects, reserved, deadlineMs: atMs + 86_400_000 });
                continue;
              }
              const refusal = outcome.refusal;
              if (refusal.code !== 'CallLimited') throw new Error(`unexpected ${refusal.code}`);
              const first = full[0]!;
              expect([refusal.subject, refusal.ceiling]).toEqual([first.subject, first.ceiling]);
              expect(refusal.counted).toBe(model.counted(first.subject, first.ceiling.unit, (first.ceiling as { windowSeconds: number }).windowSeconds * 1000, atMs));
              expect(refusal.held).toBe(model.held(first.subject, first.ceiling.unit));
              // retryAtMs: the latest, over the full ceilings, of the first instant each has room (in-flight: the earliest deadline).
              const retries = full.map(({ subject, ceiling }) => {
                const windowMs = (ceiling as { windowSeconds: number }).windowSeconds * 1000;
                const held = model.held(subject, ceiling.unit);
                const requested = reserved[ceiling.unit];
                // The first instant booked usage alone leaves room for `extra` more.
                const byTime = (extra: number) =>
                  (model.bookings.get(subject) ?? [])
                    .map((b) => b.atMs + windowMs)
                    .filter((t) => t > atMs)
                    .sort((a, b) => a - b)
                    .find((t) => model.counted(subject, ceiling.unit, windowMs, t) + extra <= ceiling.limit);
                if (held + requested > ceiling.limit) {
                  const deadline = Math.min(...[...model.open.values()].filter((call) => call.subjects.includes(subject)).map((call) => call.deadlineMs));
                  const counted = model.counted(subject, ceiling.unit, windowMs, atMs);
                  return counted + requested > ceiling.limit ? Math.max(deadline, byTime(requested) ?? Number.NaN) : deadline;
                }
                return byTime(held + requested);
              });
              expect(refusal.retryAtMs).toBe(Math.max(...retries.map((t) => t ?? Number.NaN)));
            } else if (openIds.length > 0) {
              const callId = openIds[o.pick % openIds.length]!;
              const call = model.open.get(callId)!;
              model.open.delete(callId);
              if (o.kind === 'release') {
                await meters.releaseCall('acme', { callId, atMs });
              } else {
                const usage = o.tokens === null ? undefined : { inputTokens: o.tokens, outputTokens: 0 };
                await meters.adjustCall('acme', { callId, usage, atMs });
                model.book(call.subjects, usage === undefined ? call.reserved : { tokens: o.tokens!, requests: 1, minorUnits: 0 }, atMs);
              }
            }
          }
          // Every subject's standing agrees with the model at the end.
          for (const standing of await meters.callStandings('acme', atMs, 100)) {
            for (const entry of standing.ceilings) {
              const windowMs = (entry.ceiling as { windowSeconds: number }).windowSeconds * 1000;
              expect([standing.subject, entry.counted, entry.held]).toEqual([standing.subject, model.counted(standing.subject, entry.ceiling.unit, windowMs, atMs), model.held(standing.subject, entry.ceiling.unit)]);
            }
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});

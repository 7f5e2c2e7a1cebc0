import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { compiledEntry } from '../compiled-entry.js';
import type { CallRaceMessage, CallRaceOp } from './call-race-worker.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

// Model-call ceilings are exact across instances (docs/design/rules.md#m2, #m3): four OS
// processes, each with its own store and pool, reserve many calls of one tenant at the same
// instants against one ceiling of N tokens a window, and end them (adjust, release, or leave them
// to be booked as estimates past their deadline) in the rounds between. Rounds of reservations
// only add to what a window counts and what calls hold, rounds of ends only take from it (a call
// books no more than its worst case here), so the state after each reserving round is the highest
// it reached; the stored reservations must show it within N at every one of them.

const WORKER = fileURLToPath(new URL('./call-race-worker.ts', import.meta.url));
const WORKERS = 4;
const ROUNDS = 20;
const PER_WORKER = 5;
const N = 1000;
const WINDOW_SECONDS = 4;
const STEP_MS = 1000;
const LEASE_MS = 2500;
const T0 = 1_760_000_000_000;
const TENANT = 'race';

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;
let workers: ChildProcess[] = [];

function ask(worker: ChildProcess, message: CallRaceMessage): Promise<{ type: string; results?: string[] }> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a call-race worker exited (code ${code})`));
    worker.once('exit', onExit);
    worker.once('message', (answer: { type: string; results?: string[] }) => {
      worker.removeListener('exit', onExit);
      resolve(answer);
    });
    worker.send(message);
  });
}

beforeAll(async () => {
  url = testPgUrl();
  schema = freshSchemaName('call_races');
  store = await openPostgresStore(url, { schema });
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const compiled = await compiledEntry(WORKER);
  workers = Array.from({ length: WORKERS }, () => fork(compiled, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  await Promise.all(workers.map((worker) => ask(worker, { type: 'open', url, schema })));
}, 60_000);

afterAll(async () => {
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.exitCode !== null || !worker.connected) return resolve();
          const timer = setTimeout(() => worker.kill('SIGKILL'), 10_000);
          worker.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          worker.send({ type: 'close' });
        }),
    ),
  );
  await admin?.end();
  await store?.close();
  if (schema !== undefined) await dropSchema(url, schema);
});

// A seeded generator, so a failure can be replayed.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

interface StoredCall {
  readonly call_id: string;
  readonly reserved_tokens: number;
  readonly at_ms: number;
  readonly status: string;
  readonly booked_tokens: number | null;
  readonly closed_at_ms: number | null;
  readonly estimated: boolean;
}

describe('model-call ceilings across processes on one PostgreSQL database', () => {
  it('M3 / M2: concurrent reservations never pass a window ceiling together, in flight or booked', async () => {
    const calls = store.callMeters();
    await calls.setCallCeilings(TENANT, { tenant: [{ unit: 'tokens', limit: N, windowSeconds: WINDOW_SECONDS }] }, T0);
    const next = random(20261203);
    const open: { callId: string; inputTokens: number; maxOutputTokens: number }[] = [];
    const reserveInstants: number[] = [];
    const outcomes: Record<string, number> = {};
    const tally = (results: readonly string[]) => results.forEach((result) => (outcomes[result] = (outcomes[result] ?? 0) + 1));

    for (let round = 0; round < ROUNDS; round += 1) {
      // Reserving round: every worker reserves PER_WORKER calls at the same instant.
      const reserveAt = T0 + round * STEP_MS;
      reserveInstants.push(reserveAt);
      const batches = workers.map((_, w) =>
        Array.from({ length: PER_WORKER }, (_, i) => ({
          kind: 'reserve' as const,
          callId: `r${round}-w${w}-${i}`,
          inputTokens: 50 + Math.floor(next() * 100),
          maxOutputTokens: 100,
          leaseMs: LEASE_MS,
        })),
      );
      const reserved = await Promise.all(workers.map((worker, w) => ask(worker, { type: 'run', tenant: TENANT, atMs: reserveAt, ops: batches[w]! })));
      reserved.forEach((answer, w) => {
        tally(answer.results ?? []);
        answer.results?.forEach((result, i) => {
          const op = batches[w]![i]!;
          if (result === 'ok') open.push({ callId: op.callId, inputTokens: op.inputTokens, maxOutputTokens: op.maxOutputTokens });
        });
      });
      // Ending round, half a step later: about half the open calls end, dealt over the workers; a
      // call left long enough is booked as an estimate by a later reservation instead.
      const ends: CallRaceOp[][] = workers.map(() => []);
      for (let i = open.length - 1; i >= 0; i -= 1) {
        const call = open[i]!;
        const roll = next();
        if (roll < 0.3) ends[i % WORKERS]!.push({ kind: 'adjust', callId: call.callId, inputTokens: call.inputTokens, outputTokens: Math.floor(next() * call.maxOutputTokens) });
        else if (roll < 0.45) ends[i % WORKERS]!.push({ kind: 'release', callId: call.callId });
        else continue;
        open.splice(i, 1);
      }
      const ended = await Promise.all(workers.map((worker, w) => ask(worker, { type: 'run', tenant: TENANT, atMs: reserveAt + STEP_MS / 2, ops: ends[w]! })));
      // A call booked as an estimate past its deadline before its end came answers CONFLICT.
      for (const answer of ended) for (const result of answer.results ?? []) expect(['ok', 'CONFLICT']).toContain(result);
    }

    // The race had both outcomes, and nothing else.
    expect(Object.keys(outcomes).sort()).toEqual(['CallLimited', 'ok']);
    expect(outcomes.ok).toBeGreaterThan(ROUNDS);
    expect(outcomes.CallLimited).toBeGreaterThan(ROUNDS);

    // ::float8: a plain client hands int8 over as text (every value here is far below 2^53).
    const { rows } = await admin.query<StoredCall>(
      `SELECT call_id, reserved_tokens::float8, at_ms::float8, status, booked_tokens::float8, closed_at_ms::float8, estimated FROM ${admin.escapeIdentifier(schema)}.quota_call_reservations WHERE tenant = $1`,
      [TENANT],
    );
    expect(rows.length).toBe(outcomes.ok);
    const windowMs = WINDOW_SECONDS * 1000;
    // Every adjust here reports usage, so a call booked as an estimate is one whose deadline passed (M7).
    const estimated = rows.filter((row) => row.status === 'booked' && row.estimated);
    expect(estimated.length).toBeGreaterThan(0);
    for (const t of reserveInstants) {
      const held = rows.filter((row) => row.at_ms <= t && (row.closed_at_ms === null || row.closed_at_ms > t)).reduce((sum, row) => sum + row.reserved_tokens, 0);
      const booked = rows
        .filter((row) => row.status === 'booked' && row.closed_at_ms !== null && row.closed_at_ms > t - windowMs && row.closed_at_ms <= t)
        .reduce((sum, row) => sum + (row.booked_tokens ?? 0), 0);
      // M3: the worst cases admitted and still in flight never pass N together.
      expect(held, `held at ${t - T0} ms`).toBeLessThanOrEqual(N);
      // M2: nor with what the window counts as booked.
      expect(held + booked, `held and booked in the window at ${t - T0} ms`).toBeLessThanOrEqual(N);
    }

    // The meters agree with the reservations they were built from.
    const last = reserveInstants.at(-1)! + STEP_MS / 2;
    const [tenant] = await calls.callStandings(TENANT, last, 10);
    const stillOpen = rows.filter((row) => row.status === 'open');
    expect(tenant?.subject).toBe('tenant');
    expect(tenant?.held.tokens).toBe(stillOpen.reduce((sum, row) => sum + row.reserved_tokens, 0));
    expect(tenant?.booked.tokens).toBe(rows.reduce((sum, row) => sum + (row.booked_tokens ?? 0), 0));
    const counted = rows
      .filter((row) => row.status === 'booked' && row.closed_at_ms! > last - windowMs && row.closed_at_ms! <= last)
      .reduce((sum, row) => sum + row.booked_tokens!, 0);
    expect(tenant?.ceilings[0]?.counted).toBe(counted);
  }, 30_000);
});

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CallCeilings } from '../../src/core/call-ceilings.js';
import { isQuotaError } from '../../src/core/errors.js';
import type { CallMeterStore } from '../../src/store/port/model-calls.js';
import { openSqliteStore, type SqliteQuotaStore } from '../../src/store/sqlite/sqlite-store.js';
import type { PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

// The PostgreSQL model-call books decide on facts loaded up front and load what a decision turned
// out to read (postgres-call-books.ts). This drives both adapters through the same seeded steps,
// sized past what is loaded up front (more meters than METERS_UP_FRONT, more calls past their
// deadline than one decision books, many windows and retry instants), and asks every answer to be
// the same as the SQLite adapter's, which reads each fact as it goes.

const T0 = 1_760_000_000_000;
const TENANT = 'diff';
const CEILINGS: CallCeilings = {
  tenant: [
    { unit: 'tokens', limit: 12000, windowSeconds: 30 },
    { unit: 'minorUnits', limit: 2500, period: 'daily' },
  ],
  models: { big: [{ unit: 'requests', limit: 5, windowSeconds: 20 }] },
  groups: { heavy: { models: ['big', 'huge'], ceilings: [{ unit: 'tokens', limit: 3000, windowSeconds: 60 }] } },
  endUsers: { default: [{ unit: 'requests', limit: 2, windowSeconds: 15 }], overrides: { u007: [{ unit: 'tokens', limit: 500, windowSeconds: 10 }] } },
  leaseMs: 4000,
};

let pgStore: PostgresQuotaStore;
let sqliteStore: SqliteQuotaStore;
let schema: string;
let url: string;
let dir: { dir: string; remove: () => void };

beforeAll(async () => {
  url = testPgUrl();
  schema = freshSchemaName('call_diff');
  pgStore = await openPostgresStore(url, { schema });
  dir = tempDir();
  sqliteStore = await openSqliteStore(join(dir.dir, 'calls.db'));
});

afterAll(async () => {
  await pgStore?.close();
  await sqliteStore?.close();
  if (schema !== undefined) await dropSchema(url, schema);
  dir?.remove();
});

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

async function answer(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    if (isQuotaError(error)) return { error: error.code, message: error.message };
    throw error;
  }
}

// What kind of answer a step had, to show the steps reached each.
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number') return value > 0 ? 'expired' : 'count';
  const record = value as { error?: string; ok?: boolean; refusal?: { code: string } };
  if (record.error !== undefined) return record.error;
  if (record.ok === false) return record.refusal!.code;
  return record.ok === true ? 'reserved' : 'ended';
}

describe('the PostgreSQL model-call books answer as the SQLite ones do', () => {
  it('M1–M12 past what one load holds: many meters, many calls past their deadline, retries and ended calls', async () => {
    const stores: [CallMeterStore, CallMeterStore] = [sqliteStore.callMeters(), pgStore.callMeters()];
    for (const store of stores) await store.setCallCeilings(TENANT, CEILINGS, T0);
    const next = random(7);
    const reserved: string[] = [];
    const models = ['small', 'big', 'huge'];
    let atMs = T0;
    const seen = new Set<string>();
    for (let step = 0; step < 600; step += 1) {
      atMs += Math.floor(next() * 700);
      const roll = next();
      let op: (store: CallMeterStore) => Promise<unknown>;
      let what: string;
      if (roll < 0.5) {
        const callId = next() < 0.05 && reserved.length > 0 ? reserved[Math.floor(next() * reserved.length)]! : `c${step}`;
        const user = `u${String(Math.floor(next() * 10) === 0 ? 7 : Math.floor(next() * 120)).padStart(3, '0')}`;
        const request = {
          callId,
          model: models[Math.floor(next() * models.length)]!,
          ...(next() < 0.5 ? { agent: `a${Math.floor(next() * 5)}` } : {}),
          ...(next() < 0.9 ? { endUser: user } : {}),
          inputTokens: Math.floor(next() * 400),
          maxOutputTokens: Math.floor(next() * 300),
          ...(next() < 0.95 ? { maxMinorUnits: Math.floor(next() * 20) } : {}),
          ...(next() < 0.3 ? { leaseMs: Math.floor(next() * 3000) } : {}),
          atMs,
        };
        what = `reserve ${JSON.stringify(request)}`;
        op = (store) => store.reserveCall(TENANT, request);
        reserved.push(callId);
      } else if (roll < 0.7 && reserved.length > 0) {
        const callId = next() < 0.05 ? 'nope' : reserved[Math.floor(next() * reserved.length)]!;
        const usage = next() < 0.8 ? { inputTokens: Math.floor(next() * 300), outputTokens: Math.floor(next() * 300), ...(next() < 0.5 ? { minorUnits: Math.floor(next() * 25) } : {}) } : undefined;
        what = `adjust ${callId} ${JSON.stringify(usage)}`;
        op = (store) => store.adjustCall(TENANT, { callId, usage, atMs });
      } else if (roll < 0.8 && reserved.length > 0) {
        const callId = reserved[Math.floor(next() * reserved.length)]!;
        what = `release ${callId}`;
        op = (store) => store.releaseCall(TENANT, { callId, atMs });
      } else if (roll < 0.87) {
        const limit = 1 + Math.floor(next() * 12);
        what = `expire ${limit}`;
        op = (store) => store.expireCalls(TENANT, atMs, limit);
      } else if (roll < 0.94) {
        const limit = 1 + Math.floor(next() * 150);
        what = `standings ${limit}`;
        op = (store) => store.callStandings(TENANT, atMs, limit);
      } else {
        what = 'open calls';
        op = (store) => store.openCalls(TENANT, 30);
      }
      const [expected, actual] = [await answer(() => op(stores[0])), await answer(() => op(stores[1]))];
      expect(actual, `step ${step}: ${what}`).toEqual(expected);
      seen.add(kindOf(expected));
    }
    // The steps reached every kind of answer, and more meters than a decision loads up front.
    expect([...seen].sort()).toEqual(['CONFLICT', 'CallLimited', 'CallNeverFits', 'INVALID_ARGUMENT', 'NOT_FOUND', 'count', 'ended', 'expired', 'list', 'reserved']);
    expect((await stores[0].callStandings(TENANT, atMs, 1000)).length).toBeGreaterThan(64);
    expect(await stores[1].openCalls(TENANT, 1000)).toEqual(await stores[0].openCalls(TENANT, 1000));
    expect(await stores[1].callStandings(TENANT, atMs, 1000)).toEqual(await stores[0].callStandings(TENANT, atMs, 1000));
  }, 60_000);
});

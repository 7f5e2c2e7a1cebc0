import type { Halt } from '../../src/core/halt-scope.js';
import type { NewApiKey } from '../../src/store/api-keys.js';
import type { TenantQuota } from '../../src/core/quota.js';
import type { RateCeiling } from '../../src/core/rate.js';
import type { Spend } from '../../src/core/spend.js';

/*
 * The IPC messages between the race test and its worker processes (test/postgres/race-worker.ts).
 * Each worker is a separate OS process with its own store and pool; the test arms every worker
 * with its share of operations, waits until all are armed, then fires them together.
 */

/** One store operation a worker runs; every operation of one firing runs concurrently. */
export type RaceOp =
  | {
      readonly kind: 'admit';
      readonly tenant: string;
      readonly run: string;
      readonly atMs: number;
      /** The agent name the admission carries, its budget, and whether a refusal reports `code:bound`. */
      readonly agent?: string;
      readonly budget?: { readonly maxTokens?: number; readonly maxCallTokens?: number };
      readonly withBound?: boolean;
    }
  | {
      readonly kind: 'settlePass';
      readonly tenant: string;
      readonly run: string;
      readonly epoch: number;
      readonly atMs: number;
      /** Tokens the pass settled (default 0). */
      readonly tokens?: number;
    }
  | {
      readonly kind: 'reserve';
      readonly tenant: string;
      readonly run: string;
      readonly quota: TenantQuota;
      readonly hold: { readonly period: string; readonly amount: Spend };
      readonly atMs: number;
    }
  | {
      readonly kind: 'dispatch';
      readonly tenant: string;
      readonly run: string;
      readonly grant: string;
      readonly dispatch: string;
      readonly ceilings: readonly RateCeiling[];
      readonly atMs: number;
    }
  | { readonly kind: 'setHalt'; readonly tenant: string; readonly halt: Halt }
  | { readonly kind: 'createFirstKey'; readonly key: NewApiKey }
  | { readonly kind: 'heartbeat'; readonly tenant: string; readonly run: string; readonly epoch: number; readonly atMs: number; readonly leaseMs: number }
  | { readonly kind: 'sweepRun'; readonly tenant: string; readonly run: string; readonly atMs: number };

/**
 * What one operation answered: `ok`, a refusal code (`TooManyRuns`, `SpentOut`, `RateLimited`,
 * `Halted:<reason>`, …), `created`/`not-created` for `createFirstKey`,
 * `swept`/`untouched` for `sweepRun`, or `error:<QuotaError code>` / `error:<message>` for a fault.
 */
export type RaceResult = string;

/** Test → worker. */
export type ToWorker =
  | { readonly type: 'open'; readonly url: string; readonly schema: string }
  | { readonly type: 'arm'; readonly ops: readonly RaceOp[] }
  | { readonly type: 'fire' }
  | { readonly type: 'close' };

/** Worker → test. */
export type FromWorker =
  | { readonly type: 'opened' }
  | { readonly type: 'armed' }
  | { readonly type: 'results'; readonly results: readonly RaceResult[] }
  | { readonly type: 'failed'; readonly message: string };

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RateLimiterSQLite } from 'rate-limiter-flexible';

import { runReplay } from '../src/cli/replay/replay-run.js';
import { openReplayTarget } from '../src/cli/replay/replay-store.js';
import { createPlane } from '../src/plane/create-plane.js';
import { openStore } from '../src/store/open-store.js';
import { DEFAULT_BUSY_TIMEOUT_MS } from '../src/store/sqlite/sqlite-store.js';
import type { QuotaStore } from '../src/store/store.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { perDecision } from './per-decision.js';
import { sqliteMeter } from './sqlite-meter.js';
import { interleavedLoops, type LoopResult, type Operation, perSecond } from './timed-loop.js';

/**
 * The SQLite section: quotaplane's admission cycle on a durable file, rate-limiter-flexible's
 * `RateLimiterSQLite.consume()` on a file with the same settings, in the same run, and the
 * replay's requests per second on the conversation trace (left out with `--quick`). The two
 * loops get their costs per decision from `sqlite-meter.ts`.
 */
export const sqliteSection: BenchSection = {
  name: 'sqlite',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-'));
    let quotaplaneStore: QuotaStore | null = null;
    let peerDb: Database.Database | null = null;
    try {
      quotaplaneStore = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
      peerDb = new Database(join(directory, 'rate-limiter-flexible.db'), { timeout: DEFAULT_BUSY_TIMEOUT_MS });
      context.log('sqlite: quotaplane admit + settle and rate-limiter-flexible consume(), interleaved');
      const [cycles, consumes] = await interleavedLoops(
        [await admissionCycle(quotaplaneStore), await rateLimiterConsume(peerDb)],
        context.loopMs,
        5,
        200,
        sqliteMeter(),
      );
      const replay = context.quick ? [] : [await replayConversation(context)];
      return [
        {
          section: 'sqlite',
          name: 'quotaplane admit + settle (cycle)',
          ...figures(cycles as LoopResult, 2),
          commitsPerOperation: 2,
          note: 'durable file: WAL, synchronous=FULL, BEGIN IMMEDIATE',
        },
        {
          section: 'sqlite',
          name: 'rate-limiter-flexible consume()',
          ...figures(consumes as LoopResult, 1),
          commitsPerOperation: 1,
          note: 'RateLimiterSQLite on better-sqlite3, same pragmas',
        },
        ...replay,
      ];
    } finally {
      peerDb?.close();
      await quotaplaneStore?.close();
      await rm(directory, { recursive: true, force: true });
    }
  },
};

function figures(result: LoopResult, decisions: number): Pick<BenchRow, 'operations' | 'seconds' | 'perSecond' | 'perDecision'> {
  return { operations: result.operations, seconds: result.seconds, perSecond: perSecond(result), perDecision: perDecision(result.counters, result.operations, decisions) };
}

/**
 * One admission cycle = `admit` (halts read, hold formula, slot + hold in one `BEGIN IMMEDIATE`
 * transaction) then `settle` with `concludes` (receipt, accrue, release): two durable commits.
 */
async function admissionCycle(store: QuotaStore): Promise<Operation> {
  const plane = createPlane({ store });
  await plane.setQuota('bench', { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });
  const budget = { maxTokens: 2_000, maxCallTokens: 1_000 };
  return async () => {
    const pass = await plane.admit({ tenant: 'bench', budget, width: 1 });
    if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
    await plane.settle({ tenant: 'bench', run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
  };
}

/**
 * rate-limiter-flexible's SQLite limiter on better-sqlite3 with the pragmas `openStore` sets
 * (WAL, synchronous=FULL, the same busy timeout): one upsert transaction per `consume()`.
 */
async function rateLimiterConsume(db: Database.Database): Promise<Operation> {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const limiter = await new Promise<RateLimiterSQLite>((resolve, reject) => {
    const created: RateLimiterSQLite = new RateLimiterSQLite(
      { storeClient: db, storeType: 'better-sqlite3', tableName: 'rlf_bench', points: 1_000_000_000, duration: 3600 },
      (error?: unknown) => (error === undefined || error === null ? resolve(created) : reject(error as Error)),
    );
  });
  return async () => {
    await limiter.consume('bench', 1);
  };
}

/** The replay of docs/getting-started.md: the conversation trace, 20 tenants, 4 runs, 2 000 000 tokens a day. */
async function replayConversation(context: BenchContext): Promise<BenchRow> {
  context.log('sqlite: replay of conv.csv');
  const opened = await openReplayTarget(undefined, false);
  try {
    const report = await runReplay(
      {
        tracePath: context.conversationTrace,
        tenants: 20,
        seed: 1,
        zipfExponent: 1,
        maxConcurrent: 4,
        tokensPerPeriod: 2_000_000,
        period: 'daily',
        priceIn: 3,
        priceOut: 15,
        maxOutputTokens: 1024,
        keepStore: false,
      },
      opened.target,
      null,
    );
    if (!report.ok) throw new Error(`the bench replay found an invariant false: ${JSON.stringify(report.invariants)}`);
    return {
      section: 'sqlite',
      name: 'replay conv.csv (requests)',
      operations: report.totals.rows,
      seconds: report.timing.wallMs / 1000,
      perSecond: report.timing.requestsPerSecond,
      commitsPerOperation: null,
      note: `${report.totals.admitted} admitted, each also settled; calls sent without awaiting each (group commit)`,
    };
  } finally {
    await opened.close();
  }
}

// A race-test worker: one OS process, one PostgreSQL store with its own pool, commanded over IPC
// by test/postgres/races.test.ts (see race-protocol.ts). It is forked with `--import tsx`.
import { isQuotaError } from '../../src/core/errors.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import type { FromWorker, RaceOp, RaceResult, ToWorker } from './race-protocol.js';

let store: PostgresQuotaStore | null = null;
let armed: readonly RaceOp[] = [];

function send(message: FromWorker): void {
  process.send?.(message);
}

async function runOp(op: RaceOp): Promise<RaceResult> {
  if (store === null) throw new Error('the worker has no store open');
  try {
    if (op.kind === 'createFirstKey') return (await store.apiKeys().createFirst(op.key)) ? 'created' : 'not-created';
    const tenant = store.tenant(op.tenant);
    switch (op.kind) {
      case 'admit': {
        const answer = await tenant.admit({
          run: op.run,
          budget: op.budget ?? {},
          width: 1,
          atMs: op.atMs,
          leaseMs: 60_000,
          ...(op.agent === undefined ? {} : { agent: { name: op.agent, digest: 'ab'.repeat(32) } }),
        });
        if (answer.ok) return 'ok';
        if (op.withBound === true && (answer.refusal.code === 'TooManyRuns' || answer.refusal.code === 'SpentOut')) {
          return `${answer.refusal.code}:${answer.refusal.bound}`;
        }
        // A halt refusal carries its reason, so the test can tell which halt stopped the run.
        return answer.refusal.code === 'Halted' ? `Halted:${answer.refusal.reason}` : answer.refusal.code;
      }
      case 'reserve': {
        const answer = await tenant.reserve({ run: op.run, quota: op.quota, hold: op.hold, atMs: op.atMs });
        return answer.ok ? 'ok' : answer.refusal.code;
      }
      case 'dispatch': {
        const answer = await tenant.dispatch({
          run: op.run,
          grant: op.grant,
          dispatch: op.dispatch,
          ceilings: op.ceilings,
          exempt: false,
          atMs: op.atMs,
        });
        return answer.ok ? 'ok' : answer.refusal.code;
      }
      case 'settlePass': {
        const settled = await tenant.settlePass({ run: op.run, epoch: op.epoch, spend: { tokens: op.tokens ?? 0, minorUnits: 0 }, concludes: true, atMs: op.atMs });
        return settled.outcome;
      }
      case 'setHalt':
        await tenant.setHalt(op.halt);
        return 'ok';
      case 'heartbeat': {
        const answer = await tenant.heartbeat({ run: op.run, epoch: op.epoch, atMs: op.atMs, leaseMs: op.leaseMs });
        return answer.ok ? 'ok' : answer.refusal.code;
      }
      case 'sweepRun': {
        const swept = await tenant.sweepRun({ run: op.run, atMs: op.atMs });
        return swept.releasedSlot || swept.stranded ? 'swept' : 'untouched';
      }
    }
  } catch (error) {
    return isQuotaError(error) ? `error:${error.code}` : `error:${String(error)}`;
  }
}

process.on('message', (message: ToWorker) => {
  void (async () => {
    try {
      switch (message.type) {
        case 'open': {
          store = await openPostgresStore(message.url, { schema: message.schema, poolSize: 4 });
          // Open all four connections now, so the first firing does not race connection setup.
          await Promise.all([0, 1, 2, 3].map(() => store!.tenant('warm-up').running()));
          send({ type: 'opened' });
          break;
        }
        case 'arm':
          armed = message.ops;
          send({ type: 'armed' });
          break;
        case 'fire': {
          const ops = armed;
          armed = [];
          send({ type: 'results', results: await Promise.all(ops.map(runOp)) });
          break;
        }
        case 'close':
          await store?.close();
          process.exit(0);
      }
    } catch (error) {
      send({ type: 'failed', message: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) });
    }
  })();
});

// If the test process dies, so does this worker.
process.on('disconnect', () => process.exit(0));

// A worker of test/postgres/call-races.test.ts: one OS process with its own PostgreSQL store and
// pool, running the model-call operations it is sent, all at once, and answering their outcomes.
import { isQuotaError } from '../../src/core/errors.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';

/** One model-call operation of a round; every operation of a round runs at its `atMs`. */
export type CallRaceOp =
  | { readonly kind: 'reserve'; readonly callId: string; readonly inputTokens: number; readonly maxOutputTokens: number; readonly leaseMs: number }
  | { readonly kind: 'adjust'; readonly callId: string; readonly inputTokens: number; readonly outputTokens: number }
  | { readonly kind: 'release'; readonly callId: string };

export type CallRaceMessage =
  | { readonly type: 'open'; readonly url: string; readonly schema: string }
  | { readonly type: 'run'; readonly tenant: string; readonly atMs: number; readonly ops: readonly CallRaceOp[] }
  | { readonly type: 'close' };

let store: PostgresQuotaStore | null = null;

async function runOp(tenant: string, atMs: number, op: CallRaceOp): Promise<string> {
  const calls = store!.callMeters();
  try {
    if (op.kind === 'reserve') {
      const answer = await calls.reserveCall(tenant, { callId: op.callId, model: 'm', inputTokens: op.inputTokens, maxOutputTokens: op.maxOutputTokens, leaseMs: op.leaseMs, atMs });
      return answer.ok ? 'ok' : answer.refusal.code;
    }
    if (op.kind === 'adjust') await calls.adjustCall(tenant, { callId: op.callId, usage: { inputTokens: op.inputTokens, outputTokens: op.outputTokens }, atMs });
    else await calls.releaseCall(tenant, { callId: op.callId, atMs });
    return 'ok';
  } catch (error) {
    return isQuotaError(error) ? error.code : `thrown: ${String(error)}`;
  }
}

process.on('message', (message: CallRaceMessage) => {
  void (async () => {
    if (message.type === 'open') {
      store = await openPostgresStore(message.url, { schema: message.schema, migrate: false });
      process.send?.({ type: 'opened' });
    } else if (message.type === 'run') {
      const results = await Promise.all(message.ops.map((op) => runOp(message.tenant, message.atMs, op)));
      process.send?.({ type: 'results', results });
    } else {
      await store?.close();
      process.exit(0);
    }
  })();
});

import { admitInTurn, grantWaiters } from '../../core/lifecycle/waiting.js';
import { decideHeartbeat, decideResume, decideSettlePass, fence, renewLease, requireOpenRun, withholdIfHalted } from '../../core/lifecycle/passes.js';
import { reserveRate } from '../../core/lifecycle/rate-decision.js';
import { configuredRateCeilings } from '../../core/quota.js';
import type {
  AdmitOutcome,
  AdmitRequest,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  ResumeOutcome,
  ResumeRequest,
  SettlePassOutcome,
  SettlePassRequest,
} from '../types.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';

/*
 * The run-lifecycle composites on PostgreSQL (store.ts): each is one decision of core/lifecycle/,
 * run on the tenant's books inside a batch of the store's batcher (postgres-batcher.ts), which
 * holds the tenant's lock, applies the decision at its instant, and writes what it changed.
 * Mirrors sqlite-lifecycle.ts.
 */

/** Admission (store.ts `admit`), the tenant's waiters served first: core's `admitInTurn`. */
export function admit(context: LifecycleContext, request: AdmitRequest): Promise<AdmitOutcome> {
  const { applied, ...r } = request;
  return context.batch.decide({
    tenant: context.tenant,
    name: 'admission',
    atMs: r.atMs,
    applied,
    run: r.run,
    agent: r.agent?.name ?? null,
    decide: (_books, atMs, queues) => admitInTurn(queues, context.tenant, { ...r, atMs }).outcome,
  });
}

/** A resume (store.ts `resume`, docs/design/rules.md#l15–#l17): core's `decideResume`. */
export function resume(context: LifecycleContext, request: ResumeRequest): Promise<ResumeOutcome> {
  const { applied, ...r } = request;
  return context.batch.decide({
    tenant: context.tenant,
    name: 'resume',
    atMs: r.atMs,
    applied,
    run: r.run,
    decide: (books, atMs) => decideResume(books, { ...r, atMs }),
  });
}

/**
 * The end of a pass (store.ts `settlePass`, docs/design/rules.md#l19–#l22): core's
 * `decideSettlePass` (with `by`, an operator's, it appends the `run.settle` audit row); a slot it
 * gives back goes to the tenant's waiters in the same transaction.
 */
export function settlePass(context: LifecycleContext, request: SettlePassRequest): Promise<SettlePassOutcome> {
  const { applied, ...r } = request;
  return context.batch.decide({
    tenant: context.tenant,
    name: 'settle',
    atMs: r.atMs,
    applied,
    run: r.run,
    decide: (books, atMs, queues) => {
      const outcome = decideSettlePass(books, { ...r, atMs });
      grantWaiters(queues, context.tenant, atMs);
      return outcome;
    },
  });
}

/** A heartbeat (store.ts `heartbeat`): core's `decideHeartbeat`. */
export function heartbeat(context: LifecycleContext, request: HeartbeatRequest): Promise<HeartbeatOutcome> {
  const { applied, ...r } = request;
  return context.batch.decide({
    tenant: context.tenant,
    name: 'heartbeat',
    atMs: r.atMs,
    applied,
    run: r.run,
    decide: (books, atMs) => decideHeartbeat(books, { ...r, atMs }),
  });
}

/**
 * A run's dispatch (store.ts `dispatch`): the run must be open; with `epoch` the pass is fenced; a
 * subject halt on the chain answers `Withheld` and counts nothing; with `epoch` the lease is
 * renewed; then the caller's ceilings plus the stored quota's ceilings for the grant go through
 * core's `reserveRate`. Mirrors `dispatchInTransaction` of sqlite-lifecycle.ts.
 */
export function dispatch(context: LifecycleContext, request: DispatchRequest): Promise<DispatchOutcome> {
  const { applied, ...r } = request;
  const tenant = context.tenant;
  return context.batch.decide<DispatchOutcome>({
    tenant,
    name: 'dispatch',
    atMs: r.atMs,
    applied,
    run: r.run,
    decide: (books, atMs) => {
      const record = requireOpenRun(books, r.run, 'dispatch');
      const lease = r.epoch !== undefined ? fence(books, record, r.epoch, 'dispatch') : null;
      const withheld = withholdIfHalted(books, record, atMs);
      if (withheld !== null) return { ok: false, refusal: withheld };
      if (r.epoch !== undefined && r.leaseMs !== undefined && lease !== null) {
        renewLease(books, record, r.epoch, lease.leaseExpiresAtMs, atMs, r.leaseMs);
      }
      const configured = configuredRateCeilings(books.storedQuota(), r.grant);
      return reserveRate(books, tenant, {
        grant: r.grant,
        run: r.run,
        dispatch: r.dispatch,
        ceilings: [...r.ceilings, ...configured],
        atMs,
        exempt: r.exempt,
      });
    },
  });
}

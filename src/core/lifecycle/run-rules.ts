import { QuotaError } from '../errors.js';
import { coveringHalt, haltReachesRunning, haltScopeKey, type Halt, type HaltTarget } from '../halt-scope.js';
import type { WithheldRefusal } from '../refusal.js';
import { CLOSED_RUN_STATUSES, type RunStatus } from './types.js';

/*
 * Backend-neutral rules of passes, leases and withheld runs, pure and
 * synchronous so an adapter calls them inside its transaction. Every adapter must decide exactly
 * so; the conformance suite holds it to that.
 */

/** Whether a run of `status` is closed for good: no pass, heartbeat, dispatch or admission retry. */
export function isClosedStatus(status: RunStatus): boolean {
  return CLOSED_RUN_STATUSES.includes(status);
}

/** `CONFLICT` for a verb on a closed run, saying what to do instead. */
export function closedRunError(tenant: string, run: string, status: RunStatus, verb: string): QuotaError {
  const why = status === 'released' ? 'was released by an operator' : 'has concluded';
  return new QuotaError('CONFLICT', `run '${run}' of tenant '${tenant}' ${why}, so it cannot ${verb}; start a new run`, {
    details: { tenant, run, status },
  });
}

/** What fencing reads of a run and one of its passes. `pass` is `undefined` when no such pass exists. */
export interface FenceInput {
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  readonly status: RunStatus;
  readonly lastEpoch: number;
  readonly pass: { readonly settledAtMs: number | null } | undefined;
  /** `heartbeat` or `dispatch`, as the message names the act. */
  readonly verb: string;
}

/**
 * Fences pass `(run, epoch)` before it renews its lease (store.ts `heartbeat` steps 1–4), or
 * returns normally when the pass may go on. Throws `NOT_FOUND` for an unknown pass, `CONFLICT`
 * for a closed run, a stale epoch (`details.latestEpoch`), a settled pass, or a stranded run.
 */
export function fencePass(input: FenceInput): void {
  const { tenant, run, epoch, verb } = input;
  const details = { tenant, run, epoch, latestEpoch: input.lastEpoch };
  if (input.pass === undefined) {
    throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no pass ${run}/${epoch} to ${verb}; use the epoch admit or resume answered`, {
      details: { tenant, run, epoch },
    });
  }
  if (isClosedStatus(input.status)) throw closedRunError(tenant, run, input.status, verb);
  if (epoch < input.lastEpoch) {
    throw new QuotaError(
      'CONFLICT',
      `pass ${run}/${epoch} is stale: a newer pass (epoch ${input.lastEpoch}) of the run exists, so this one must stop; ` +
        `settle it with what it spent and leave the run to the newer pass`,
      { details },
    );
  }
  if (input.pass.settledAtMs !== null) {
    throw new QuotaError('CONFLICT', `pass ${run}/${epoch} has settled already, so it cannot ${verb}; resume the run for a new pass`, {
      details,
    });
  }
  if (input.status === 'stranded') {
    throw new QuotaError(
      'CONFLICT',
      `pass ${run}/${epoch} lost its lease and the sweep stranded the run, so it cannot ${verb}; ` +
        `settle the pass with what it spent, then resume the run`,
      { details },
    );
  }
}

/**
 * The `Withheld` refusal for a running run a standing halt that reaches running work covers, or
 * `null` (docs/design/rules.md#l47, #c44): a subject halt on a principal of its chain, or a tenant,
 * agent or revision halt thrown with `reachesRunning`. Among several, the one `coveringHalt` names
 * (the narrowest) is reported; halts that stop admissions only are not considered. `halts` must be
 * read in the deciding transaction.
 */
export function withheldBy(tenant: string, halts: readonly Halt[], target: HaltTarget): WithheldRefusal | null {
  const halt = coveringHalt(halts.filter(haltReachesRunning), target);
  if (halt === null) return null;
  const scope = haltScopeKey(halt.scope);
  return halt.scope.kind === 'subject'
    ? { code: 'Withheld', tenant, subject: halt.scope.principal, scope, reason: halt.reason }
    : { code: 'Withheld', tenant, scope, reason: halt.reason };
}

/** The halt scope key a withheld refusal names, for messages and attention. */
export function withheldScopeKey(refusal: WithheldRefusal): string {
  if (refusal.scope !== undefined) return refusal.scope;
  return haltScopeKey({ kind: 'subject', principal: refusal.subject ?? '' });
}

/**
 * A run's status after its latest pass newly settled (store.ts `settlePass`): a released run stays
 * released; a concluding settle concludes; a withheld run stays withheld while it pauses; anything
 * else pauses.
 */
export function statusAfterSettle(current: RunStatus, concludes: boolean): RunStatus {
  if (current === 'released') return 'released';
  if (concludes) return 'concluded';
  return current === 'withheld' ? 'withheld' : 'paused';
}

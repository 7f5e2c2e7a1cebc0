import { QuotaError } from '../errors.js';
import type { RunStatus } from './types.js';

/** The tombstone of a pruned run, as a refusal reports it. */
export interface PrunedRunRecord {
  readonly run: string;
  readonly status: RunStatus;
  readonly lastEpoch: number;
  readonly closedAtMs: number;
  readonly prunedAtMs: number;
}

/**
 * `CONFLICT` for a decision about a run whose records a prune removed: a run is
 * pruned only once every one of its passes has settled, so what it spent is booked, and a retried
 * settle (or an admission, resume, heartbeat or dispatch under its id) is refused rather than
 * applied again. `details.pruned` is `true`; `details.lastEpoch` is how many passes it had.
 */
export function prunedRunError(tenant: string, pruned: PrunedRunRecord, verb: string): QuotaError {
  const closed = pruned.status === 'released' ? 'was released' : 'concluded';
  return new QuotaError(
    'CONFLICT',
    `run '${pruned.run}' of tenant '${tenant}' ${closed} at ${new Date(pruned.closedAtMs).toISOString()} and its records were ` +
      `pruned at ${new Date(pruned.prunedAtMs).toISOString()} (retention), so it cannot ${verb}: a run is pruned only after ` +
      `every one of its passes has settled (it had ${pruned.lastEpoch}), so what it spent is already booked and nothing is ` +
      `counted again; start a new run under a new id`,
    {
      details: {
        tenant,
        run: pruned.run,
        pruned: true,
        status: pruned.status,
        lastEpoch: pruned.lastEpoch,
        closedAtMs: pruned.closedAtMs,
        prunedAtMs: pruned.prunedAtMs,
      },
    },
  );
}


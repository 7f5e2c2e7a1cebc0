import { answerAdmissionRetry } from '../../core/lifecycle/admission-retry.js';
import { decodeAdmittedRun, type RetryFactsRow } from '../admit-retry.js';
import { corrupt } from '../rows.js';
import type { AdmitRequest, PassGrant } from '../types.js';
import type { PostgresConnection } from './postgres-connection.js';

/** Everything an admission retry is judged on, in one statement and so one snapshot (see `store/admit-retry.ts`). */
export function retryFactsSql(s: string): string {
  return `SELECT r.run_id, r.status, r.agent_name, r.agent_digest, r.chain_json::text AS chain_json, r.admitted_at_ms,
    r.last_epoch, r.budget_json, r.width,
    p.period AS pass_period, p.lease_expires_at_ms, p.settled_at_ms,
    p.hold_tokens AS pass_hold_tokens, p.hold_minor_units AS pass_hold_minor_units,
    EXISTS (SELECT 1 FROM ${s}.quota_running x WHERE x.tenant = r.tenant AND x.run_id = r.run_id) AS slot_held,
    h.tokens AS hold_tokens, h.minor_units AS hold_minor_units
  FROM ${s}.quota_runs r
  LEFT JOIN ${s}.quota_passes p ON p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = 1
  LEFT JOIN ${s}.quota_reserved h ON h.tenant = r.tenant AND h.run_id = r.run_id
  WHERE r.tenant = $1 AND r.run_id = $2`;
}

/**
 * The answer to an admission that `quota_admit` found registered already (`existing` or `closed`):
 * the run's facts read in one snapshot and judged by `answerAdmissionRetry`
 * (docs/design/rules.md#l13–#l14-2). The function wrote nothing on those outcomes, so reading after
 * it is safe.
 */
export async function answerRetry(db: PostgresConnection, sql: string, tenant: string, request: AdmitRequest): Promise<PassGrant> {
  const row = await db.row<RetryFactsRow>(sql, [tenant, request.run], 'admit-retry');
  if (row === undefined) throw corrupt(tenant, `run '${request.run}' vanished after its admission was found`);
  return answerAdmissionRetry(tenant, request, decodeAdmittedRun(tenant, row));
}

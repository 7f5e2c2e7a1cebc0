import { MAX_AMOUNT } from '../core/amounts.js';
import { corrupt } from '../core/lifecycle/corrupt.js';
import type { AgentIdentity } from '../core/halt-scope.js';
import { isIdentifier } from '../core/identifiers.js';
import type { Spend } from '../core/spend.js';
import { RUN_STATUSES, type AuditRecord, type RunRecord, type RunStatus } from './types.js';

/*
 * Decoders from stored rows to domain values, shared by the SQLite and PostgreSQL adapters so the
 * two backends cannot read a row apart. Each adapter selects its columns under the names below
 * (PostgreSQL casts its JSONB chain to text). A row that does not decode throws `STORE_CORRUPT` and
 * is never skipped: a skipped row reads from outside like an absent one. Backend-specific decoders
 * stay in `sqlite/sqlite-rows.ts` and `postgres/postgres-rows.ts`.
 */

/** Columns of a `quota_runs` row as `SELECT_RUN` reads them. */
export interface RunRow {
  readonly run_id: string;
  readonly status: string;
  readonly agent_name: string | null;
  readonly agent_digest: string | null;
  readonly chain_json: string | null;
  readonly admitted_at_ms: number;
  readonly last_epoch: number;
}

/** Columns of a `quota_audit` row as `LIST_AUDIT` reads them. */
export interface AuditRow {
  readonly seq: number;
  readonly at_ms: number;
  readonly actor: string;
  readonly basis: string;
  readonly action: string;
  readonly subject: string;
  readonly detail_json: string;
  readonly hash: string;
}

export { corrupt };

/** A stored run id; one that is not an identifier is corrupt ("bad run id … in the quota slot table"). */
export function decodeRunId(tenant: string, table: string, value: unknown): string {
  if (!isIdentifier(value)) throw corrupt(tenant, `a bad run id ${JSON.stringify(value)} in the quota ${table} table`, { table });
  return value;
}

/**
 * A stored amount (0 … 2^53 − 1). The columns are integers with CHECK constraints, so this only
 * guards hand edits and an int8 outside the safe range (which the PostgreSQL pool parses to NaN).
 */
export function decodeAmount(tenant: string, what: string, value: unknown): number {
  // A SQLite sum comes back as REAL; it is integral and already clamped.
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_AMOUNT) {
    throw corrupt(tenant, `an unreadable amount in ${what}`);
  }
  return value;
}

/** A spend from two amount columns. */
export function decodeSpend(tenant: string, what: string, tokens: unknown, minorUnits: unknown): Spend {
  return { tokens: decodeAmount(tenant, what, tokens ?? 0), minorUnits: decodeAmount(tenant, what, minorUnits ?? 0) };
}

/** A run registry row. */
export function decodeRun(tenant: string, row: RunRow): RunRecord {
  const run = decodeRunId(tenant, 'run', row.run_id);
  if (!(RUN_STATUSES as readonly string[]).includes(row.status)) throw corrupt(tenant, `run '${run}' with the unknown status ${JSON.stringify(row.status)}`);
  let agent: AgentIdentity | null = null;
  if (row.agent_name !== null && row.agent_digest !== null) agent = { name: row.agent_name, digest: row.agent_digest };
  return {
    run,
    status: row.status as RunStatus,
    agent,
    chain: decodeChain(tenant, run, row.chain_json),
    admittedAtMs: row.admitted_at_ms,
    lastEpoch: row.last_epoch,
  };
}

/**
 * A run's delegation chain from its stored JSON text (`null` when the run has none); anything but
 * an array of strings is `STORE_CORRUPT`.
 */
export function decodeChain(tenant: string, run: string, chainJson: string | null): string[] | null {
  if (chainJson === null) return null;
  let chain: unknown;
  try {
    chain = JSON.parse(chainJson);
  } catch {
    chain = undefined;
  }
  if (!Array.isArray(chain) || !chain.every((principal) => typeof principal === 'string')) {
    throw corrupt(tenant, `run '${run}' with an unreadable delegation chain`);
  }
  return chain as string[];
}

/** An audit row. */
export function decodeAudit(tenant: string, row: AuditRow): AuditRecord {
  let detail: unknown;
  try {
    detail = JSON.parse(row.detail_json);
  } catch {
    detail = undefined;
  }
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail) || (row.basis !== 'asserted' && row.basis !== 'authenticated')) {
    throw corrupt(tenant, `audit row ${row.seq} that cannot be read`, { seq: row.seq });
  }
  return {
    seq: row.seq,
    atMs: row.at_ms,
    by: { actor: row.actor, basis: row.basis },
    action: row.action,
    subject: row.subject,
    detail: detail as Record<string, unknown>,
    hash: row.hash,
  };
}

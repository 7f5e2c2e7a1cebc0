import type { Halt } from '../../core/halt-scope.js';
import type { TenantQuota } from '../../core/quota.js';
import type { Spend } from '../../core/spend.js';
import type { LiftedHalt } from '../../plane/lifted-halts.js';
import type {
  AttentionInput,
  AttentionReport,
  AuditLogPage,
  AuditVerification,
  RunsInput,
  RunsPage,
  SweepResult,
} from '../../plane/operator-types.js';
import type { HaltResult, LiftResult, SettleResult, Usage } from '../../plane/plane.js';
import type { Held, ReleaseRunOutcome } from '../../store/types.js';

/**
 * What the operator commands act on (issue #5): the plane's operator verbs with the acting
 * operator already bound. Today's implementation works on a store (`--store URL`, the operator
 * named by `--actor` and recorded as `asserted`); a server-backed one (`--url URL --key KEY`,
 * recorded as the key's name, `authenticated`) plugs in by implementing this interface over the
 * HTTP client. Every command is written against this interface only.
 *
 * Acts that write (`halt`, `lift`, `release`, `settle`, `setQuota`) are attributed to the bound
 * operator; listings and reads need none. A method throws `QuotaError` as the plane does.
 */
export interface OperatorTarget {
  /** What the commands say they act on, e.g. `store sqlite:./quotaplane.db`. */
  readonly description: string;
  /** Every tenant with rows, in byte order. */
  tenants(): Promise<string[]>;
  halt(input: { tenant: string; scope: string; reason: string }): Promise<HaltResult>;
  lift(input: { tenant: string; scope: string }): Promise<LiftResult>;
  halts(tenant: string): Promise<Halt[]>;
  /** Recorded lifts of a tenant, newest first, at most `limit` (one more is read to know `truncated`). */
  liftedHalts(tenant: string, limit: number): Promise<{ items: readonly LiftedHalt[]; truncated: boolean }>;
  usage(tenant: string): Promise<Usage>;
  runs(input: RunsInput): Promise<RunsPage>;
  reservations(input: { tenant: string; limit: number }): Promise<{ holds: readonly Held[]; truncated: boolean }>;
  release(input: { tenant: string; run: string }): Promise<ReleaseRunOutcome>;
  settle(input: { tenant: string; run: string; epoch: number; spend: Spend; concludes: boolean }): Promise<SettleResult>;
  attention(input: AttentionInput): Promise<AttentionReport>;
  getQuota(tenant: string): Promise<TenantQuota | null>;
  setQuota(tenant: string, quota: TenantQuota): Promise<TenantQuota>;
  auditLog(input: { tenant: string; limit: number; action?: string | undefined }): Promise<AuditLogPage>;
  verifyAudit(input: { tenant?: string | undefined }): Promise<AuditVerification>;
  sweep(input: { tenant?: string | undefined }): Promise<SweepResult>;
  /** Releases what the target holds open (the store connection). */
  close(): Promise<void>;
}

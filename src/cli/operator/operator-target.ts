import type { AlertsStatus, EventsInput, EventsPage } from '../../plane/event-types.js';
import type { CallCeilings } from '../../core/call-ceilings.js';
import type { CallReservation } from '../../core/lifecycle/call-books.js';
import type { SubjectStanding } from '../../core/lifecycle/call-standings.js';
import type { CallEnded } from '../../core/lifecycle/model-calls.js';
import type { Halt } from '../../core/halt-scope.js';
import type { Operator } from '../../core/operator.js';
import type { TenantQuota, TenantQuotaInput } from '../../core/quota.js';
import type { QuotaPatch } from '../../core/quota-patch.js';
import type { Spend } from '../../core/spend.js';
import type {
  AttentionInput,
  AttentionReport,
  AuditLogPage,
  AuditVerification,
  DeleteTenantAnswer,
  LiftedHaltsPage,
  ReservationsPage,
  RunsInput,
  RunsPage,
  SweepResult,
} from '../../plane/operator-types.js';
import type { HaltResult, LiftResult, Plane, PlanePatch, PlaneStatus, SettleResult, Usage } from '../../plane/plane.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { ReleaseRunOutcome, RunStatus } from '../../store/types.js';
import { UsageError } from '../usage-error.js';
import type { PruneInput, PruneResult } from '../../plane/prune-types.js';

/**
 * What the operator commands act on: the plane's operator verbs with the acting
 * operator already bound. Two implementations, one code path: a plane on a store (`--store URL`,
 * the operator named by `--actor` and recorded as `asserted`) and the HTTP client of a server
 * (`--url URL --key KEY`, recorded by the server as the key's name, `authenticated`). Both are
 * {@link planeOperatorTarget} over something with the {@link Plane}'s shape, and every command is
 * written against this interface only, so a verb cannot behave differently by where it acts.
 *
 * Acts that write (`halt`, `lift`, `release`, `settle`, `setQuota`) are attributed to the bound
 * operator; listings and reads need none. A method throws `QuotaError` as the plane does.
 */
export interface OperatorTarget {
  /** What the commands act on, e.g. `store sqlite:./quotaplane.db` or `server http://127.0.0.1:7070`. */
  readonly description: string;
  /** Every tenant with rows (on a server: those the key covers), in byte order. */
  tenants(): Promise<string[]>;
  /** `newTenant`: the tenant is meant to be new (docs/design/rules.md#l95); otherwise one that does not exist is refused. */
  halt(input: { tenant: string; scope: string; reason: string; newTenant?: boolean; reachesRunning?: boolean }): Promise<HaltResult>;
  lift(input: { tenant: string; scope: string }): Promise<LiftResult>;
  /** The plane-wide halt over every tenant (docs/design/rules.md#c49), audited as `plane.halt`. */
  haltPlane(input: { reason: string; reachesRunning?: boolean }): Promise<HaltResult>;
  /** Lifts the plane-wide halt, audited as `plane.lift`. */
  liftPlaneHalt(input: Record<string, never>): Promise<LiftResult>;
  halts(tenant: string): Promise<Halt[]>;
  /** Recorded lifts of a tenant, newest first, at most `limit` (one more is read to know `truncated`). */
  liftedHalts(input: { tenant: string; limit: number }): Promise<LiftedHaltsPage>;
  usage(tenant: string): Promise<Usage>;
  runs(input: RunsInput): Promise<RunsPage>;
  reservations(input: { tenant: string; limit: number }): Promise<ReservationsPage>;
  release(input: { tenant: string; run: string; ifStatus?: RunStatus }): Promise<ReleaseRunOutcome>;
  /** Deletes a tenant but its audit chain (docs/design/rules.md#l95-4–#l95-7). */
  deleteTenant(input: { tenant: string; reason: string }): Promise<DeleteTenantAnswer>;
  settle(input: { tenant: string; run: string; epoch: number; spend: Spend; concludes: boolean }): Promise<SettleResult>;
  attention(input: AttentionInput): Promise<AttentionReport>;
  getQuota(tenant: string): Promise<TenantQuota | null>;
  /** `newTenant`: the tenant is meant to be new (docs/design/rules.md#l95); otherwise one that does not exist is refused. */
  setQuota(tenant: string, quota: TenantQuotaInput, options?: { newTenant?: boolean }): Promise<TenantQuota>;
  /** Changes part of the quota (JSON Merge Patch), audited as `quota.update`. */
  updateQuota(tenant: string, patch: QuotaPatch, options?: { newTenant?: boolean }): Promise<TenantQuota>;
  /** The plane-wide ceiling with every tenant's running slots against it. */
  planeStatus(): Promise<PlaneStatus>;
  /** Replaces the plane-wide ceiling, audited as `plane.set`. */
  setPlaneCeiling(ceiling: PlaneCeiling): Promise<PlaneCeiling>;
  /** Changes part of the plane-wide ceiling (JSON Merge Patch), audited as `plane.update`. */
  updatePlaneCeiling(patch: PlanePatch): Promise<PlaneCeiling>;
  auditLog(input: { tenant: string; limit: number; action?: string | undefined }): Promise<AuditLogPage>;
  verifyAudit(input: { tenant?: string | undefined }): Promise<AuditVerification>;
  /** A page of the event log after `after`, of one tenant when given (docs/design/rules.md#e8). */
  events(input: EventsInput): Promise<EventsPage>;
  /** A tenant's spend-alert thresholds as they stand this period (docs/design/rules.md#e7). */
  alerts(tenant: string): Promise<AlertsStatus>;
  sweep(input: { tenant?: string | undefined }): Promise<SweepResult>;
  /** Retention (docs/design/rules.md#r1); a dry run needs no operator, a prune is attributed to the bound one. */
  prune(input: Omit<PruneInput, 'by' | 'atMs'>): Promise<PruneResult>;
  /** A tenant's model-call ceilings, or `null` when none are set (docs/design/rules.md#m1). */
  getCallCeilings(tenant: string): Promise<CallCeilings | null>;
  /** Replaces (`null`: removes) a tenant's model-call ceilings, audited as `calls.set`. */
  setCallCeilings(tenant: string, ceilings: CallCeilings | null, options?: { newTenant?: boolean }): Promise<CallCeilings | null>;
  /** Every subject with a model-call meter or ceilings, as it stands now (docs/design/rules.md#m10). */
  callStandings(input: { tenant: string; limit: number }): Promise<SubjectStanding[]>;
  /** A tenant's model calls in flight, earliest deadline first. */
  openCalls(input: { tenant: string; limit: number }): Promise<CallReservation[]>;
  /** Gives a stuck model call's reservation back; nothing is booked. */
  releaseCall(input: { tenant: string; callId: string }): Promise<CallEnded>;
  /** Releases what the target holds open (the store connection; nothing for a server). */
  close(): Promise<void>;
}

/**
 * The {@link OperatorTarget} over `plane` (a local plane or the HTTP client). `by` is the operator
 * every act that writes is attributed to, or `null` when the command only reads: an act that
 * writes without one is a usage error, never attributed to `$USER` or anyone else. `close` is
 * called once the command is done.
 */
export function planeOperatorTarget(
  plane: Plane,
  options: { readonly description: string; readonly by: Operator | null; readonly close: () => Promise<void> },
): OperatorTarget {
  const operator = (verb: string): Operator => {
    if (options.by === null) throw new UsageError(`${verb} writes, so it needs --actor <name> (recorded as asserted; never taken from $USER)`);
    return options.by;
  };
  return {
    description: options.description,
    tenants: () => plane.tenants(),
    halt: (input) => plane.halt({ ...input, by: operator('halt') }),
    lift: (input) => plane.lift({ ...input, by: operator('lift') }),
    haltPlane: (input) => plane.haltPlane({ ...input, by: operator('halt') }),
    liftPlaneHalt: () => plane.liftPlaneHalt({ by: operator('lift') }),
    halts: (tenant) => plane.halts(tenant),
    liftedHalts: (input) => plane.liftedHalts(input),
    usage: (tenant) => plane.usage({ tenant }),
    runs: (input) => plane.runs(input),
    reservations: (input) => plane.reservations(input),
    release: (input) => plane.release({ ...input, by: operator('release') }),
    deleteTenant: (input) => plane.deleteTenant({ ...input, by: operator('delete-tenant') }),
    settle: (input) => plane.settle({ ...input, by: operator('settle') }),
    attention: (input) => plane.attention(input),
    getQuota: (tenant) => plane.getQuota(tenant),
    setQuota: (tenant, quota, options) => plane.setQuota(tenant, quota, { by: operator('quota set'), newTenant: options?.newTenant }),
    updateQuota: (tenant, patch, options) => plane.updateQuota(tenant, patch, { by: operator('quota update'), newTenant: options?.newTenant }),
    planeStatus: () => plane.planeStatus(),
    setPlaneCeiling: (ceiling) => plane.setPlaneCeiling(ceiling, operator('quota plane set')),
    updatePlaneCeiling: (patch) => plane.updatePlaneCeiling(patch, operator('quota plane update')),
    auditLog: (input) => plane.auditLog(input),
    verifyAudit: (input) => plane.verifyAudit(input),
    events: (input) => plane.events(input),
    alerts: (tenant) => plane.alerts({ tenant }),
    sweep: (input) => plane.sweep(input),
    prune: (input) => plane.prune({ ...input, by: input.dryRun ? undefined : operator('prune') }),
    getCallCeilings: (tenant) => plane.getCallCeilings(tenant),
    setCallCeilings: (tenant, ceilings, options) => plane.setCallCeilings(tenant, ceilings, { by: operator('calls set'), newTenant: options?.newTenant }),
    callStandings: (input) => plane.callStandings(input),
    openCalls: (input) => plane.openCalls(input),
    releaseCall: (input) => plane.releaseCall({ ...input, by: operator('calls release') }),
    close: options.close,
  };
}

// The package entry `quotaplane`: the public surface, listed name by name (no `export *`), so
// nothing internal leaks and every addition is a visible decision. Docstrings live at each
// definition. The conformance battery and the manual clock are the separate `quotaplane/testing`.

// ── store ──────────────────────────────────────────────────────────────────────
export { openStore, type OpenStoreOptions } from './store/open-store.js';
export { unvalidated, validated } from './store/validated-store.js';
export { STORE_URL_FORMS } from './store/store-url.js';
export type {
  ApiKeysCapability,
  AuditStore,
  DeleteTenantOutcome,
  DeleteTenantRequest,
  HaltStore,
  OperatorStore,
  PlaneCeilingStore,
  PlaneHaltStore,
  EventLogStore,
  QuotaStore,
  RetentionStore,
  RunLifecycleStore,
  StorePrimitives,
  TenantDeletionStore,
  TenantQuotaStore,
  TenantScoped,
  TenantStore,
  WaitingStore,
} from './store/store.js';
export type { MigrationReport } from './store/migrations.js';
export type {
  AdmitOutcome,
  AdmitRequest,
  AuditEntry,
  AuditRecord,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  Held,
  IdleHold,
  OverranPass,
  LeaseRenewal,
  PassGrant,
  PassRecord,
  QuotaSettlement,
  RateOutcome,
  RateReservation,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  ReserveOutcome,
  ResumeOutcome,
  ResumeRequest,
  RunListRequest,
  RunRecord,
  RunStatus,
  RunSummary,
  SettleOutcome,
  SettlePassOutcome,
  SettlePassRequest,
  SpendHold,
  SweptRun,
} from './store/types.js';
export { CLOSED_RUN_STATUSES, RUN_STATUSES } from './store/types.js';

export {
  ALL_TENANTS,
  API_KEY_ROLES,
  type ApiKeyRecord,
  type ApiKeyRole,
  type ApiKeyStore,
  type NewApiKey,
  type RevokeOutcome,
} from './store/api-keys.js';

// ── plane ──────────────────────────────────────────────────────────────────────
export { createPlane, DEFAULT_LEASE_MS } from './plane/create-plane.js';
export { appliedAtMs, atApply, DEFAULT_MAX_DECISION_WAIT_MS, MAX_DECISION_WAIT_MS } from './store/applied-instant.js';
export type { AppliedInstant } from './store/types.js';
export { MAX_LEASE_MS } from './store/store-arguments.js';
export { MAX_INSTANT_MS } from './core/instant.js';
export { systemClock } from './plane/system-clock.js';
export { DEFAULT_SWEEP_INTERVAL_MS, startSweeper, type SweeperOptions } from './plane/sweeper.js';
export { DEFAULT_PRUNE_INTERVAL_MS, startPruner, type PrunerOptions } from './plane/pruner.js';
// Webhook deliveries (docs/design/rules.md#h1–#h13, docs/guides/webhooks.md).
export {
  createDispatcher,
  DEFAULT_WEBHOOK_BATCH,
  DEFAULT_WEBHOOK_LEASE_MS,
  DEFAULT_WEBHOOK_POLL_MS,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  signatureHeader,
  webhookHeaders,
  type AttemptMetric,
  type DispatcherOptions,
  type Dispatcher,
  type DispatchRound,
  type WebhookSend,
} from './plane/webhook-dispatcher.js';
export {
  createWebhooks,
  DEFAULT_ROTATION_OVERLAP_MS,
  MAX_ROTATION_OVERLAP_MS,
  WEBHOOK_SECRET_BYTES,
  type AddWebhookInput,
  type WebhookAdmin,
  type WebhookAdminOptions,
  type WebhookEndpointView,
  type WebhookSecretIssued,
} from './plane/webhooks.js';
export {
  afterFailedAttempt,
  retryCeilingMs,
  WEBHOOK_FIRST_RETRY_MS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_MAX_RETRY_MS,
  WEBHOOK_MIN_RETRY_MS,
  type DeliveryStatus,
  type WebhookSecret,
} from './core/webhook-retry.js';
export { webhookBody } from './core/webhook-payload.js';
export { EVENT_WRITING_VERBS, nudgingPlane } from './plane/webhook-nudge.js';
export type { WebhookDelivery, WebhookEndpoint, WebhookStore, WebhooksCapability } from './store/port/webhooks.js';
// Model-call ceilings (docs/design/rules.md#m1–#m13, docs/concepts/model-calls.md).
export {
  CALL_UNITS,
  DEFAULT_CALL_LEASE_MS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  describeCallCeiling,
  MAX_CALL_AMOUNT,
  MAX_CALL_LEASE_MS,
  MAX_CALL_WINDOW_SECONDS,
  MAX_CEILINGS_PER_SUBJECT,
  parseCallCeilings,
  type CallCeiling,
  type CallCeilings,
  type CallModelGroup,
  type CallUnit,
} from './core/call-ceilings.js';
export { callRefusalMessage, type CallLimitedRefusal, type CallNeverFitsRefusal, type CallRefusal } from './core/call-refusal.js';
export type { CallAmounts } from './core/call-meter.js';
export type { CallParties } from './core/call-coverage.js';
export type { CallReservation, CallStatus } from './core/lifecycle/call-books.js';
export type { CeilingStanding, SubjectStanding } from './core/lifecycle/call-standings.js';
export type { CallEnded, CallUsage, ReserveCallOutcome } from './core/lifecycle/model-calls.js';
export type { AdjustCallInput, ReleaseCallInput, ReserveCallInput } from './plane/model-calls.js';
export type { CallMeterStore, CallMetersCapability } from './store/port/model-calls.js';
export {
  DEFAULT_PRUNE_BATCH,
  RATE_PRUNE_BATCH,
  type PruneInput,
  type PruneProgress,
  type PruneResult,
  type TenantPruned,
} from './plane/prune-types.js';
export {
  MAX_PRUNE_BATCH,
  PRUNABLE_STATUSES,
  prunedRunError,
  type PrunableRun,
  type PrunableRunsPage,
  type PrunableRunsRequest,
  type PrunableStatus,
  type PrunedRate,
  type PrunedRuns,
  type PrunedRunRecord,
  type PruneRateRequest,
  type PruneRunsRequest,
} from './store/retention.js';
export {
  ATTENTION_KINDS,
  DEFAULT_HOLD_STALE_AFTER_MS,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  type AttentionCondition,
  type AttentionInput,
  type AttentionKind,
  type AttentionItem,
  type AttentionReport,
  type AuditLogInput,
  type AuditLogPage,
  type AuditMismatch,
  type AuditVerification,
  type LiftedHaltsInput,
  type LiftedHaltsPage,
  type ReleaseInput,
  type DeleteTenantAnswer,
  type DeleteTenantInput,
  type Remedy,
  type ReservationsInput,
  type ReservationsPage,
  type RunsInput,
  type RunsPage,
  type SlotHoldersInput,
  type SlotHoldersPage,
  type SweepInput,
  type SweepResult,
  type TenantAuditVerification,
  type TenantSweptRun,
  type VerifyAuditInput,
} from './plane/operator-types.js';
export { liftedHaltOf, type LiftedHalt } from './plane/lifted-halts.js';
export type {
  AdmitInput,
  AdmitRefusal,
  AdmitResult,
  DispatchInput,
  DispatchRefusal,
  DispatchResult,
  HaltInput,
  HeartbeatInput,
  HeartbeatResult,
  HaltReach,
  HaltResult,
  LiftInput,
  PlaneHaltInput,
  PlaneHaltResult,
  PlaneHaltView,
  PlaneLiftInput,
  LiftResult,
  Plane,
  PlaneOptions,
  ResumeInput,
  ResumeResult,
  SettleInput,
  SettleResult,
  Usage,
  UsageInput,
} from './plane/plane.js';
export type { AlertsStatus, CeilingAlerts, EventsInput, EventsPage } from './plane/event-types.js';
export type { PeriodSpend, SpendHistory, SpendHistoryInput } from './plane/spend-history.js';
export type { RateWindow, RateWindows, RateWindowsInput } from './plane/rate-windows.js';
export { MAX_HISTORY_PERIODS, recentPeriodKeys } from './core/recent-periods.js';
export type { Clock } from './core/clock.js';

// ── errors ─────────────────────────────────────────────────────────────────────
export { isQuotaError, QuotaError, type QuotaErrorCode } from './core/errors.js';

// ── core decisions and values ──────────────────────────────────────────────────
export { MAX_AMOUNT } from './core/amounts.js';
export { MAX_IDENTIFIER_LENGTH, isIdentifier, normaliseRunId } from './core/identifiers.js';
export { RESERVED_TENANT_PREFIX, isReservedTenant, requireCustomerTenant } from './core/identifiers.js';
export { isPeriodKey, periodEndMs, periodKey, PERIODS, type Period } from './core/period.js';
export { addSpend, ZERO_SPEND, type Spend } from './core/spend.js';
export {
  boundsSpend,
  isUnlimited,
  parseQuota,
  parseRateCeilings,
  UNLIMITED_QUOTA,
  type TenantQuota,
  type TenantQuotaInput,
} from './core/quota.js';
export { holdFor, parseBudget, type Budget, type BudgetField, type HoldOutcome, type SpendUnit } from './core/budget.js';
export { checkSpend, type SpendCheck } from './core/spend-check.js';
export { EVENT_TYPES, type EventType, type NewEvent, type QuotaEvent } from './core/events.js';
export {
  DEFAULT_ALERT_THRESHOLDS,
  MAX_ALERT_THRESHOLDS,
  MAX_THRESHOLD_PERCENT,
  parseAlertThresholds,
  thresholdAmount,
  thresholdStates,
  type AlertThreshold,
  type BooksUnit,
  type ThresholdState,
} from './core/alert-thresholds.js';
export { alertThresholdSource, alertThresholdsFor, type ThresholdSource } from './core/alert-threshold-source.js';
export {
  describeRateCeiling,
  isCountableWindow,
  MAX_RATE_WINDOW_SECONDS,
  ratePruneFloorMs,
  rateWindowStartMs,
  type RateCeiling,
} from './core/rate.js';
export { checkRate, type RateCheck } from './core/rate-check.js';
export {
  countedSince,
  judgeRateBoundaries,
  rateBoundaryOrdinal,
  recordedRateInstantMs,
  type FullRateCeiling,
  type RateBoundary,
} from './core/rate-ordinal.js';
export {
  compareHaltScopes,
  coveringHalt,
  describeHaltScope,
  HALT_SCOPE_FORMS,
  haltCovers,
  haltScopeForms,
  haltScopeKey,
  parseHaltScope,
  withdrawsFrom,
  type AgentIdentity,
  type Halt,
  type HaltScope,
  type HaltTarget,
} from './core/halt-scope.js';
export { parseOperator, type Operator } from './core/operator.js';
export {
  refusalMessage,
  type HaltedRefusal,
  type RateLimitedRefusal,
  type Refusal,
  type RefusalCode,
  type Refused,
  type SpentOutRefusal,
  type TooManyRunsRefusal,
  type UnboundedRefusal,
  type UncountableRateRefusal,
  type WithheldRefusal,
} from './core/refusal.js';

// ── running agents ─────────────────────────────────────────────────────────────
// The run helper; the SDK adapters are the entries quotaplane/ai-sdk and quotaplane/openai-agents.
export { withRun, type RunCompleted, type WithRunOptions, type WithRunResult } from './adapters/with-run.js';
export type { ActiveRun, Allowance, CallTicket, RecordedSpend, RunDispatchOptions, RunDispatchResult } from './adapters/active-run.js';
export type { RunPlane } from './adapters/run-plane.js';
export { ModelCallLimitedError, RunBudgetExhaustedError, RunRefusedError, RunSettleError, RunWithheldError, ToolCallRefusedError } from './adapters/run-errors.js';
export { costOf, parsePriceTable, type ModelPrice, type PriceTable, type TokenCounts } from './adapters/model-price.js';

// ── operability ────────────────────────────────────────────────────────────────
export { applyQuotaPatch, type QuotaPatch } from './core/quota-patch.js';
export { redactStoreUrl } from './store/store-url.js';
export { type MisconfigurationReason } from './store/store-configuration.js';
export { storeApiKeyAdmin, type ApiKeyAdmin, type CreatedApiKey, type RevokedApiKey } from './plane/api-key-admin.js';

// ── the books ──────────────────────────────────────────────────────────────────
export { overrunOf } from './core/overrun.js';
export { sumOverflowError, requireSumFits } from './core/amounts.js';

// ── ceilings above and below the tenant ────────────────────────────────────────
export {
  applyPlanePatch,
  boundsPlane,
  NO_PLANE_CEILING,
  parsePlaneCeiling,
  planeAgentLimit,
  tenantWeight,
  type PlaneAgentCeiling,
  type PlaneCeiling,
} from './core/plane-ceiling.js';
export { agentCeilingsOf, holdQuotaFor, parseAgentCeilings, type AgentCeilings } from './core/quota.js';
export {
  admissionConcurrencyRefusal,
  admissionSpendRefusal,
  type AdmissionSpendCheck,
  type ConcurrencyFigures,
  type CoveringCeilings,
  type PeriodFigures,
} from './core/admission-ceilings.js';
export type { CeilingBound } from './core/refusal.js';
export type { AgentUsage, PlaneUsage } from './store/types.js';
export type { AgentUsageFigures, PlanePatch, PlaneStatus } from './plane/plane.js';
export { KEYS_AUDIT_TENANT, PLANE_AUDIT_TENANT } from './core/identifiers.js';
// Waiting admissions.
export { MAX_WAIT_MS, WAITER_LEASE_MS } from './plane/wait-admission.js';
export type { CancelOutcome, WaitingAdmission, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from './store/waiters.js';
export type { WaiterWakes } from './store/waiter-wakes.js';
export type { QueueFigures } from './plane/plane.js';
export type { TenantWaiterSweep } from './plane/operator-types.js';

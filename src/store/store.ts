import type { AuditStore } from './port/audit.js';
import type { HaltStore } from './port/halts.js';
import type { ApiKeysCapability } from './port/keys.js';
import type { RunLifecycleStore } from './port/lifecycle.js';
import type { OperatorStore } from './port/operator.js';
import type { PlaneCeilingStore } from './port/plane-ceiling.js';
import type { PlaneHaltStore } from './port/plane-halt.js';
import type { EventLogStore } from './port/events.js';
import type { TenantAlertsStore } from './port/alerts.js';
import type { StorePrimitives } from './port/primitives.js';
import type { TenantQuotaStore } from './port/quota.js';
import type { TenantDeletionStore } from './port/tenant-deletion.js';
import type { RetentionStore } from './port/retention.js';
import type { WaitingStore } from './port/waiting.js';
import type { WebhooksCapability } from './port/webhooks.js';
import type { CallMetersCapability } from './port/model-calls.js';
import type { WaiterWakes } from './waiter-wakes.js';

// The port is read capability by capability, one file each under port/; this file joins them.
export type { AuditStore } from './port/audit.js';
export type { HaltStore } from './port/halts.js';
export type { ApiKeysCapability } from './port/keys.js';
export type { RunLifecycleStore } from './port/lifecycle.js';
export type { OperatorStore } from './port/operator.js';
export type { PlaneCeilingStore } from './port/plane-ceiling.js';
export type { PlaneHaltStore } from './port/plane-halt.js';
export type { EventLogStore } from './port/events.js';
export type { TenantAlertsStore } from './port/alerts.js';
export type { StorePrimitives } from './port/primitives.js';
export type { TenantQuotaStore } from './port/quota.js';
export type { RetentionStore } from './port/retention.js';
export type { TenantScoped } from './port/tenant-scoped.js';
export type { DeleteTenantOutcome, DeleteTenantRequest, TenantDeletionStore } from './port/tenant-deletion.js';
export type { WaitingStore } from './port/waiting.js';
export type {
  AttemptOutcome,
  AttemptReport,
  ClaimedDelivery,
  DeliveryQuery,
  NewWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhooksCapability,
  WebhookStore,
} from './port/webhooks.js';

/**
 * The durable store behind quotaplane: one database serving many tenants through
 * tenant-scoped handles. Adapters: SQLite (embedded default) and PostgreSQL.
 * Every handle method is one transaction; a store that cannot answer throws
 * `QuotaError('STORE_UNAVAILABLE')` and callers fail closed. The arguments of every method are
 * checked by `validated()` (validated-store.ts), which `openStore` applies: an adapter may assume
 * them valid and normalised, and the `INVALID_ARGUMENT` documented below is the wrapper's.
 * Besides its own members it has six optional capabilities: the plane-wide ceiling
 * (`PlaneCeilingStore`), the plane-wide halt (`PlaneHaltStore`), the event log (`EventLogStore`),
 * the API keys (`ApiKeysCapability`), the webhooks (`WebhooksCapability`, docs/design/rules.md#h1)
 * and the model-call books (`CallMetersCapability`, docs/design/rules.md#m1).
 */
export interface QuotaStore extends PlaneCeilingStore, PlaneHaltStore, EventLogStore, ApiKeysCapability, WebhooksCapability, CallMetersCapability {
  /** `'sqlite'` or `'postgres'`. */
  readonly backend: string;
  /** A handle confined to one tenant's rows. Throws `INVALID_ARGUMENT` for a bad tenant id. */
  tenant(tenant: string): TenantStore;
  /**
   * The known tenants, in byte order: those the store holds a record of, of any kind of
   * `TENANT_RECORDS` (a quota, a run, a slot, a waiter, spend, a halt, an audit row, an API key, or
   * a model-call meter or ceilings; rules.md#l95).
   */
  tenants(): Promise<string[]>;
  /**
   * Whether `tenant` is known (docs/design/rules.md#l95): the store holds a record of it of any
   * kind of `TENANT_RECORDS`, exactly when `tenants()` would list it, read with one indexed look-up
   * per kind instead of the whole listing. Read-only. Optional so a third-party store keeps
   * compiling: without it the plane asks `tenants()`. Throws `INVALID_ARGUMENT` for a bad tenant id.
   */
  hasTenant?(tenant: string): Promise<boolean>;
  /**
   * Every tenant that has an audit chain, in byte order, those whose chain ends in their deletion
   * included (docs/design/rules.md#l95-5: a deleted tenant's chain is kept, and verifying every
   * chain walks it too; `tenants()` no longer lists it). Read-only. Optional so a third-party store
   * keeps compiling: without it, verifying every chain walks those of `tenants()`.
   */
  auditChains?(): Promise<string[]>;
  /**
   * How waiting admissions are woken: in this process at once, across instances by
   * PostgreSQL `LISTEN/NOTIFY` or, on SQLite, by the poll interval. Optional for third-party
   * adapters: without it a waiting caller polls every 100 ms.
   */
  waiterWakes?(): WaiterWakes;
  /** Closes connections. Further calls throw `STORE_UNAVAILABLE`. */
  close(): Promise<void>;
}

/**
 * One tenant's view of the store: every capability of a tenant handle, each one transaction per
 * method, none reading or writing another tenant's rows. The store primitives
 * (`StorePrimitives`) are what the conformance suite's C cases prove; the rest is what the plane
 * builds on: the tenant's quota (`TenantQuotaStore`), its halts (`HaltStore`), the run lifecycle
 * (`RunLifecycleStore`), the sweep and operator acts (`OperatorStore`), waiting admissions
 * (`WaitingStore`), retention (`RetentionStore`), the audit log (`AuditStore`), the tenant's
 * deletion (`TenantDeletionStore`) and alerts fired on demand (`TenantAlertsStore`). A function that
 * needs one capability takes that interface, so it says what it touches.
 */
export interface TenantStore
  extends StorePrimitives,
    TenantQuotaStore,
    HaltStore,
    RunLifecycleStore,
    OperatorStore,
    WaitingStore,
    RetentionStore,
    AuditStore,
    TenantDeletionStore,
    TenantAlertsStore {}
export type { CallMeterStore, CallMetersCapability, CeilingStanding, SubjectStanding } from './port/model-calls.js';

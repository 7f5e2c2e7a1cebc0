import type { CallCeilings } from '../../core/call-ceilings.js';
import type { SubjectStanding } from '../../core/lifecycle/call-standings.js';
import type { CallReservation } from '../../core/lifecycle/call-books.js';
import type { AdjustCallRequest, CallEnded, ReserveCallOutcome, ReserveCallRequest } from '../../core/lifecycle/model-calls.js';

/**
 * The model-call books of every tenant (docs/design/rules.md#m1–#m12). Each method is one
 * transaction, exact across processes sharing the store; the decisions are core's
 * (core/lifecycle/model-calls.ts). The adapters check no argument: the plane validates first.
 */
export interface CallMeterStore {
  /** The tenant's configured ceilings, or `null` when none were set. */
  callCeilings(tenant: string): Promise<CallCeilings | null>;
  /** Replaces the tenant's ceilings (the meters and their counts stay: docs/design/rules.md#m9); `null` removes them. */
  setCallCeilings(tenant: string, ceilings: CallCeilings | null, atMs: number): Promise<void>;
  reserveCall(tenant: string, request: ReserveCallRequest): Promise<ReserveCallOutcome>;
  adjustCall(tenant: string, request: AdjustCallRequest): Promise<CallEnded>;
  releaseCall(tenant: string, request: { readonly callId: string; readonly atMs: number }): Promise<CallEnded>;
  /** One call as stored, or `null`. */
  call(tenant: string, callId: string): Promise<CallReservation | null>;
  /** The tenant's open calls, earliest deadline first, at most `limit`. */
  openCalls(tenant: string, limit: number): Promise<CallReservation[]>;
  /**
   * Every subject of the tenant that has a meter or configured ceilings, as it stands at `atMs`,
   * in subject order, at most `limit` (after books up to a few calls past their deadline).
   */
  callStandings(tenant: string, atMs: number, limit: number): Promise<SubjectStanding[]>;
  /** Books the tenant's open calls past their deadline at `atMs` as estimates, at most `limit`; answers how many. */
  expireCalls(tenant: string, atMs: number, limit: number): Promise<number>;
}

/** A store that keeps model-call books (optional, so a third-party store keeps compiling). */
export interface CallMetersCapability {
  callMeters?(): CallMeterStore;
}

export type { CeilingStanding, SubjectStanding } from '../../core/lifecycle/call-standings.js';

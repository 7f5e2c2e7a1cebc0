import { eventKey, type NewEvent } from './events.js';
import { haltScopeKey, type Halt } from './halt-scope.js';
import type { Operator } from './operator.js';
import type { Spend } from './spend.js';

/*
 * The events of runs and halts (docs/design/rules.md#e6), each keyed by what it is about so it is
 * written once: a pass that overran its hold, a run the sweep stranded, a halt thrown or lifted.
 */

/**
 * `run.overran`: pass (run, epoch) of `tenant` settled `spend`, `overrun` more than the `hold` it
 * was granted (docs/design/rules.md#l90). One per pass.
 */
export function overrunEvent(tenant: string, run: string, epoch: number, agent: string | null, period: string, hold: Spend, spend: Spend, overrun: Spend, atMs: number): NewEvent {
  return {
    key: eventKey('run.overran', tenant, run, epoch),
    type: 'run.overran',
    tenant,
    atMs,
    data: { run, epoch, agent, period, hold: { ...hold }, spend: { ...spend }, overrun: { ...overrun } },
  };
}

/** `run.stranded`: the sweep found the lease of pass (run, epoch) lapsed at `leaseExpiredAtMs` and stranded the run. One per pass. */
export function strandedEvent(tenant: string, run: string, epoch: number, leaseExpiredAtMs: number, atMs: number): NewEvent {
  return {
    key: eventKey('run.stranded', tenant, run, epoch),
    type: 'run.stranded',
    tenant,
    atMs,
    data: { run, epoch, leaseExpiredAtMs },
  };
}

/** Who lifted a halt and when (Unix ms), as the lift's caller knows it. */
export interface HaltLift {
  readonly atMs: number;
  readonly by: Operator;
}

function haltData(halt: Halt): Record<string, unknown> {
  return { scope: haltScopeKey(halt.scope), reason: halt.reason, by: { ...halt.by }, thrownAtMs: halt.atMs, reachesRunning: halt.reachesRunning === true };
}

/**
 * `halt.set`: `halt` was thrown (or re-thrown) on `tenant` (`null`: the plane-wide halt), written
 * in the transaction that stores it (docs/design/rules.md#e6). Keyed by the scope and the instant
 * it was thrown at, so a retry of the same throw writes nothing more.
 */
export function haltSetEvent(tenant: string | null, halt: Halt): NewEvent {
  return { key: eventKey('halt.set', tenant, haltScopeKey(halt.scope), halt.atMs), type: 'halt.set', tenant, atMs: halt.atMs, data: haltData(halt) };
}

/**
 * `halt.lifted`: the standing `halt` was removed, written in the transaction that removes it, so a
 * lift that removes nothing (another lift, or a re-throw, came first) writes none
 * (docs/design/rules.md#e6). Keyed like the throw it ends: a throw is lifted once. `lift` says who
 * lifted it and when; without it (the port's bare lift) the event bears the halt's own instant.
 */
export function haltLiftedEvent(tenant: string | null, halt: Halt, lift: HaltLift | undefined): NewEvent {
  return {
    key: eventKey('halt.lifted', tenant, haltScopeKey(halt.scope), halt.atMs),
    type: 'halt.lifted',
    tenant,
    atMs: lift?.atMs ?? halt.atMs,
    data: { ...haltData(halt), liftedBy: lift === undefined ? null : { ...lift.by }, liftedAtMs: lift?.atMs ?? null },
  };
}

import { saturatingAdd } from '../core/amounts.js';
import type { Budget } from '../core/budget.js';
import { invalidArgument, isQuotaError } from '../core/errors.js';
import type { RateCeiling } from '../core/rate.js';
import type { RateLimitedRefusal, Refused, UncountableRateRefusal, WithheldRefusal } from '../core/refusal.js';
import { requireSpend, type Spend, ZERO_SPEND } from '../core/spend.js';
import { RunWithheldError } from './run-errors.js';
import type { RunPlane } from './run-plane.js';

/** What one unit of a run still allows: `undefined` when the budget does not bound that unit. */
export interface Allowance {
  readonly tokens: number | undefined;
  readonly minorUnits: number | undefined;
}

/** A spend booked with `record`: `retract()` takes it back before the pass settles (answers false once settled or retracted). */
export interface RecordedSpend {
  readonly spend: Spend;
  readonly estimate: boolean;
  retract(): boolean;
}

/**
 * One metered call in flight (a model call), opened with `ActiveRun.beginCall(estimate)`. Until it
 * ends, `estimate` counts against what the run has left, so calls in flight at once (width > 1)
 * cannot together ask for more than the budget. It ends exactly once:
 * - `finish(spend)` books the call's real spend;
 * - `fail()` books `estimate`, marked as an estimate, and answers a `RecordedSpend` whose
 *   `retract()` takes it back if the call is retried (a failed attempt that is retried adds nothing);
 * - left open when the pass settles (an abandoned stream), it is booked at `estimate`, marked as an
 *   estimate (docs/design/decisions.md "Usage never reads as zero by absence").
 */
export interface CallTicket {
  readonly estimate: Spend;
  readonly open: boolean;
  finish(spend: Spend): void;
  fail(): RecordedSpend | undefined;
}

/** Options of `ActiveRun.dispatch`: extra `ceilings` the caller declares for the grant, and `exempt` (a compensating call). */
export interface RunDispatchOptions {
  readonly ceilings?: readonly RateCeiling[] | undefined;
  readonly exempt?: boolean | undefined;
}

/** Answer of `ActiveRun.dispatch`: counted, or a rate refusal value (a `Withheld` answer is thrown instead). */
export type RunDispatchResult = { readonly ok: true } | Refused<RateLimitedRefusal | UncountableRateRefusal>;

/**
 * The run a `withRun` body works in: one admitted (or resumed) pass, its books, and the signal
 * that stops it. Every method refers to the pass `(run, epoch)`.
 *
 * - `signal` aborts when the body must stop: a `Withheld` answer (reason: a `RunWithheldError`),
 *   the caller's `AbortSignal` (its reason), or a lost pass (the `CONFLICT`/`NOT_FOUND` of a
 *   heartbeat). Pass it to the SDK (`abortSignal`, `signal`).
 * - `spend` is what the pass has booked so far; `estimated` is true once any booked amount is a
 *   per-call bound standing in for a missing usage report.
 * - `record(spend)` books the real cost of a model call (non-negative safe integers; never
 *   clipped to the budget: an overrun is booked as it happened, docs/design/rules.md#l90).
 * - `dispatch(grant, key)` counts one tool call against the grant's rate ceilings
 *   (`plane.dispatch` with this pass's epoch, which renews its lease). `key` is the call's
 *   idempotency key (the SDK's tool-call id): a retry with the same key is counted once. A
 *   `RateLimited` or `UncountableRate` refusal is returned as a value; `Withheld` stops the run
 *   and is thrown as `RunWithheldError`.
 * - `heartbeat()` renews the lease now and throws if the run is stopped (the adapters call it
 *   before every model call, so a subject halt stops the agent before its next turn).
 * - `remaining()` is the budget minus what is booked and what calls in flight may still cost.
 */
export interface ActiveRun {
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  readonly budget: Budget;
  readonly signal: AbortSignal;
  readonly spend: Spend;
  readonly estimated: boolean;
  record(spend: Spend, options?: { readonly estimate?: boolean }): RecordedSpend;
  dispatch(grant: string, key: string, options?: RunDispatchOptions): Promise<RunDispatchResult>;
  heartbeat(): Promise<void>;
  throwIfStopped(): void;
  remaining(): Allowance;
  beginCall(estimate: Spend): CallTicket;
}

type Stop =
  | { readonly kind: 'withheld'; readonly refusal: WithheldRefusal }
  | { readonly kind: 'aborted'; readonly reason: unknown }
  | { readonly kind: 'lost'; readonly error: unknown };

interface Entry {
  readonly spend: Spend;
  readonly estimate: boolean;
  live: boolean;
}

/** The books and state of one pass, behind the `ActiveRun` a body sees. Internal to `withRun`. */
export class PassBooks implements ActiveRun {
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  readonly budget: Budget;
  private readonly plane: RunPlane;
  private readonly leaseMs: number | undefined;
  private readonly spentBefore: Spend;
  private readonly controller = new AbortController();
  private readonly entries: Entry[] = [];
  private readonly tickets = new Set<{ estimate: Spend; settle(): void }>();
  private inFlight: Spend = ZERO_SPEND;
  private stopped: Stop | undefined;
  private closed = false;

  constructor(fields: {
    plane: RunPlane;
    tenant: string;
    run: string;
    epoch: number;
    budget: Budget;
    leaseMs: number | undefined;
    spentBefore: Spend;
  }) {
    this.plane = fields.plane;
    this.tenant = fields.tenant;
    this.run = fields.run;
    this.epoch = fields.epoch;
    this.budget = fields.budget;
    this.leaseMs = fields.leaseMs;
    this.spentBefore = fields.spentBefore;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get spend(): Spend {
    let tokens = 0;
    let minorUnits = 0;
    for (const entry of this.entries) {
      if (!entry.live) continue;
      tokens = saturatingAdd(tokens, entry.spend.tokens);
      minorUnits = saturatingAdd(minorUnits, entry.spend.minorUnits);
    }
    return { tokens, minorUnits };
  }

  get estimated(): boolean {
    return this.entries.some((entry) => entry.live && entry.estimate);
  }

  /** Why the run stopped, if it did. */
  get stop(): Stop | undefined {
    return this.stopped;
  }

  record(spend: Spend, options: { readonly estimate?: boolean } = {}): RecordedSpend {
    const checked = requireSpend('spend', spend);
    if (this.closed) {
      throw invalidArgument(
        'spend',
        `run '${this.run}' pass ${this.epoch} has settled, so spend recorded now is not booked; record (and await metered streams) inside the body`,
      );
    }
    const entry: Entry = { spend: checked, estimate: options.estimate === true, live: true };
    this.entries.push(entry);
    return {
      spend: checked,
      estimate: entry.estimate,
      retract: () => {
        if (!entry.live || this.closed) return false;
        entry.live = false;
        return true;
      },
    };
  }

  remaining(): Allowance {
    const used = this.spend;
    const left = (max: number | undefined, before: number, booked: number, flying: number) =>
      max === undefined ? undefined : Math.max(0, max - before - booked - flying);
    return {
      tokens: left(this.budget.maxTokens, this.spentBefore.tokens, used.tokens, this.inFlight.tokens),
      minorUnits: left(this.budget.maxMinorUnits, this.spentBefore.minorUnits, used.minorUnits, this.inFlight.minorUnits),
    };
  }

  beginCall(estimate: Spend): CallTicket {
    const bound = requireSpend('estimate', estimate);
    this.throwIfStopped();
    this.inFlight = { tokens: saturatingAdd(this.inFlight.tokens, bound.tokens), minorUnits: saturatingAdd(this.inFlight.minorUnits, bound.minorUnits) };
    let open = true;
    const end = () => {
      open = false;
      this.tickets.delete(handle);
      this.inFlight = {
        tokens: Math.max(0, this.inFlight.tokens - bound.tokens),
        minorUnits: Math.max(0, this.inFlight.minorUnits - bound.minorUnits),
      };
    };
    // Booked at its estimate when the pass settles with the call still open (an abandoned stream).
    const handle = {
      estimate: bound,
      settle: () => {
        end();
        this.entries.push({ spend: bound, estimate: true, live: true });
      },
    };
    this.tickets.add(handle);
    return {
      estimate: bound,
      get open() {
        return open;
      },
      finish: (spend: Spend) => {
        if (!open) return;
        end();
        this.record(spend);
      },
      fail: () => {
        if (!open) return undefined;
        end();
        return this.record(bound, { estimate: true });
      },
    };
  }

  async dispatch(grant: string, key: string, options: RunDispatchOptions = {}): Promise<RunDispatchResult> {
    this.throwIfStopped();
    const answer = await this.plane.dispatch({
      tenant: this.tenant,
      run: this.run,
      epoch: this.epoch,
      grant,
      dispatch: key,
      ceilings: options.ceilings ?? [],
      ...(options.exempt === undefined ? {} : { exempt: options.exempt }),
      ...(this.leaseMs === undefined ? {} : { leaseMs: this.leaseMs }),
    });
    if (answer.ok) return answer;
    if (answer.refusal.code === 'Withheld') throw this.withhold(answer.refusal);
    return answer as Refused<RateLimitedRefusal | UncountableRateRefusal>;
  }

  async heartbeat(): Promise<void> {
    this.throwIfStopped();
    let answer;
    try {
      answer = await this.plane.heartbeat({
        tenant: this.tenant,
        run: this.run,
        epoch: this.epoch,
        ...(this.leaseMs === undefined ? {} : { leaseMs: this.leaseMs }),
      });
    } catch (error) {
      // A pass the plane no longer knows as live (swept, superseded, settled) cannot go on.
      if (isQuotaError(error, 'CONFLICT') || isQuotaError(error, 'NOT_FOUND')) this.lose(error);
      throw error;
    }
    if (!answer.ok) throw this.withhold(answer.refusal);
  }

  throwIfStopped(): void {
    const stop = this.stopped;
    if (stop !== undefined) {
      if (stop.kind === 'withheld') throw this.withheldError(stop.refusal);
      if (stop.kind === 'aborted') throw stop.reason;
      throw stop.error;
    }
    if (this.closed) throw invalidArgument('run', `run '${this.run}' pass ${this.epoch} has settled; nothing more can be metered in it`);
  }

  /** Stops the run because the caller's signal aborted. */
  abort(reason: unknown): void {
    if (this.stopped !== undefined) return;
    this.stopped = { kind: 'aborted', reason };
    this.controller.abort(reason);
  }

  /** Ends the books: calls still open are booked at their estimate; nothing can be recorded after. */
  close(): void {
    for (const ticket of [...this.tickets]) ticket.settle();
    this.closed = true;
  }

  withheldError(refusal: WithheldRefusal, settle?: RunWithheldError['settle']): RunWithheldError {
    return new RunWithheldError({
      tenant: this.tenant,
      run: this.run,
      epoch: this.epoch,
      refusal,
      spend: this.spend,
      estimated: this.estimated,
      settle,
    });
  }

  private withhold(refusal: WithheldRefusal): RunWithheldError {
    const error = this.withheldError(refusal);
    if (this.stopped === undefined || this.stopped.kind !== 'withheld') {
      this.stopped = { kind: 'withheld', refusal };
      this.controller.abort(error);
    }
    return error;
  }

  private lose(error: unknown): void {
    if (this.stopped !== undefined) return;
    this.stopped = { kind: 'lost', error };
    this.controller.abort(error);
  }
}


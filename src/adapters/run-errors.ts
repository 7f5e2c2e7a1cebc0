import type { AdmitRefusal, SettleInput, SettleResult } from '../plane/plane.js';
import { callRefusalMessage, type CallRefusal } from '../core/call-refusal.js';
import type { Refused, WithheldRefusal } from '../core/refusal.js';
import type { Spend } from '../core/spend.js';

/**
 * Thrown by `withRun` when a `Withheld` answer (a subject halt on the run's chain,
 * docs/design/rules.md#l47) stopped the body. The pass was settled **without concluding**
 * (`settle`), so the run keeps its hold and is paused, not finished: after the halt is lifted,
 * continue it with `withRun(plane, { tenant, resume: error.run, … })` (or `plane.resume`). `spend`
 * is what the pass booked; `estimated` is true when part of it is a per-call bound booked for a
 * call that ended without a usage report (docs/design/decisions.md "Usage never reads as zero by
 * absence").
 */
export class RunWithheldError extends Error {
  override readonly name = 'RunWithheldError';
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  readonly refusal: WithheldRefusal;
  readonly spend: Spend;
  readonly estimated: boolean;
  readonly settle: SettleResult | undefined;

  constructor(fields: {
    tenant: string;
    run: string;
    epoch: number;
    refusal: WithheldRefusal;
    spend: Spend;
    estimated: boolean;
    settle?: SettleResult | undefined;
  }) {
    super(
      `run '${fields.run}' of tenant '${fields.tenant}' was withheld: ${fields.refusal.subject !== undefined ? `subject '${fields.refusal.subject}'` : (fields.refusal.scope ?? 'its scope')} is halted ` +
        `(${fields.refusal.reason}); its pass ${fields.epoch} ${fields.settle === undefined ? 'stops here' : 'was settled without concluding'}, ` +
        `so resume the run after the halt is lifted, or release it`,
    );
    this.tenant = fields.tenant;
    this.run = fields.run;
    this.epoch = fields.epoch;
    this.refusal = fields.refusal;
    this.spend = fields.spend;
    this.estimated = fields.estimated;
    this.settle = fields.settle;
  }
}

/**
 * Thrown by `withRun` only when `throwOnRefusal` is set and the admission (or resume) was refused;
 * without it the refusal is returned as a value (docs/design/decisions.md "Refusals are values,
 * faults are exceptions"). `refused` is the answer.
 */
export class RunRefusedError extends Error {
  override readonly name = 'RunRefusedError';
  readonly refused: Refused<AdmitRefusal | WithheldRefusal>;

  constructor(refused: Refused<AdmitRefusal | WithheldRefusal>) {
    super(refused.message);
    this.refused = refused;
  }
}

/**
 * Thrown before a model call that the run cannot afford: its budget (or the per-call bound, or
 * the money a call would cost at the model's price) leaves no output token to ask for. The model
 * was **not** called and nothing was booked. `remaining` is what the run had left, per unit
 * (`undefined` for a unit the budget does not bound).
 */
export class RunBudgetExhaustedError extends Error {
  override readonly name = 'RunBudgetExhaustedError';
  readonly run: string;
  readonly remaining: { readonly tokens: number | undefined; readonly minorUnits: number | undefined };

  constructor(run: string, remaining: { tokens: number | undefined; minorUnits: number | undefined }, why: string) {
    super(`run '${run}' has no budget left for another model call (${why}); the model was not called`);
    this.run = run;
    this.remaining = remaining;
  }
}

/**
 * Thrown by `withRun` when the settle of a pass failed on every attempt (each retry sends the same
 * payload, so a receipt written by an attempt whose answer was lost is answered, not applied
 * twice). `pending` is the exact settle to send again later (`plane.settle(error.pending)`, or
 * `quotaplane settle` by an operator); until then the run keeps its hold and `attention` lists it
 * once its lease lapses. `cause` is the last attempt's error, `bodyError` what the body threw, if it did.
 */
export class RunSettleError extends Error {
  override readonly name = 'RunSettleError';
  readonly pending: SettleInput;
  readonly bodyError: unknown;

  constructor(pending: SettleInput, attempts: number, cause: unknown, bodyError: unknown) {
    super(
      `settling pass ${pending.epoch} of run '${pending.run}' (tenant '${pending.tenant}') failed ${attempts} time(s): ` +
        `${cause instanceof Error ? cause.message : String(cause)}; send the same settle again (error.pending), it is safe to repeat`,
      { cause },
    );
    this.pending = pending;
    this.bodyError = bodyError;
  }
}

/**
 * The error a metered tool call throws (or returns, to a framework that shows the model a string)
 * when its dispatch was refused `RateLimited` or `UncountableRate`: the tool did **not** run.
 * The message says which tool, why, and, for a rate refusal, when to retry (`retryAtMs`, Unix ms).
 */
export class ToolCallRefusedError extends Error {
  override readonly name = 'ToolCallRefusedError';
  readonly tool: string;
  readonly grant: string;
  readonly retryAtMs: number | undefined;

  constructor(tool: string, grant: string, message: string, retryAtMs: number | undefined) {
    const retry = retryAtMs === undefined ? '' : `; retry after ${new Date(retryAtMs).toISOString()} (retryAtMs ${retryAtMs})`;
    super(`tool '${tool}' was not run: ${message}${retry}`);
    this.tool = tool;
    this.grant = grant;
    this.retryAtMs = retryAtMs;
  }
}

/**
 * Thrown before a model call that the tenant's model-call ceilings refused (`callCeilingMiddleware`,
 * `meterModelCalls`): the model was **not** called and nothing was reserved or booked.
 * - `refusal`: the plane's answer, `CallLimited` (a ceiling is full now) or `CallNeverFits` (the
 *   call's worst case alone passes a ceiling's limit: waiting is no use; lower the output cap or
 *   raise the ceiling);
 * - `retryAtMs`: when to ask again (Unix ms), for `CallLimited`; `undefined` for `CallNeverFits`;
 * - `retryAfterMs`: how long that is from when the refusal was received (≥ 0), or `undefined`.
 * The message names the model, the ceiling, the figures and when to retry.
 */
export class ModelCallLimitedError extends Error {
  override readonly name = 'ModelCallLimitedError';
  readonly model: string;
  readonly refusal: CallRefusal;
  readonly retryAtMs: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(model: string, refusal: CallRefusal, nowMs: number) {
    const retryAtMs = refusal.code === 'CallLimited' ? refusal.retryAtMs : undefined;
    const retryAfterMs = retryAtMs === undefined ? undefined : Math.max(0, retryAtMs - nowMs);
    const retry = retryAtMs === undefined ? '; waiting will not help' : ` (retryAtMs ${retryAtMs}, in ${retryAfterMs} ms)`;
    super(`model '${model}' was not called: ${callRefusalMessage(refusal)}${retry}`);
    this.model = model;
    this.refusal = refusal;
    this.retryAtMs = retryAtMs;
    this.retryAfterMs = retryAfterMs;
  }
}

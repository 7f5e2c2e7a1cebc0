import { invalidArgument } from '../core/errors.js';
import type { ActiveRun, CallTicket, RecordedSpend } from './active-run.js';
import { costOf, dearestPerMillion, type ModelPrice, type PriceTable, type TokenCounts } from './model-price.js';
import { RunBudgetExhaustedError } from './run-errors.js';

/**
 * One model call opened by an adapter: the output-token cap to ask the model for, and the ways it
 * ends. `finish(counts)` books the reported usage (tokens: input + output; money at the model's
 * price, rounded up); `finish(undefined)` books the per-call bound, marked as an estimate, for a
 * call that ended without a usage report; `fail()` books the same bound but retractably, for a
 * call that threw and may be retried.
 */
export interface OpenedModelCall {
  readonly maxOutputTokens: number | undefined;
  readonly ticket: CallTicket;
  finish(counts: TokenCounts | undefined): void;
  fail(): RecordedSpend | undefined;
}

/**
 * Opens a metered model call in `run` (shared by the AI SDK and Agents SDK adapters):
 *
 * 1. heartbeats the pass (renews its lease; throws `RunWithheldError` under a subject halt, or the
 *    abort reason once the run stopped), so a halted agent stops before its next model call;
 * 2. finds the model's price in `prices` (required when the run's budget bounds money: otherwise
 *    `INVALID_ARGUMENT` naming `prices["<model>"]`);
 * 3. caps the call's output tokens to the least of what the caller asked (`requestedMaxOutputTokens`),
 *    the per-call bound (`budget.maxCallTokens`), the tokens the run has left, and the output
 *    tokens its money left (and `maxCallMinorUnits`) buys at the model's output price. Input tokens
 *    are not known before the call and are not subtracted: a call's input can take it past its
 *    bound, which is booked as it happened (docs/design/rules.md#l90);
 * 4. with no budget left in a bounded unit, throws `RunBudgetExhaustedError`: the model is not called;
 * 5. reserves the call's estimate (its per-call bound: `maxCallTokens`, or the cap when the budget
 *    sets none; `maxCallMinorUnits`, or the estimate's tokens at the model's dearest rate) while
 *    it is in flight. A call with no bound at all cannot be estimated and is refused with
 *    `INVALID_ARGUMENT` naming `budget.maxCallTokens`.
 */
export async function openModelCall(
  run: ActiveRun,
  prices: PriceTable,
  modelId: string,
  requestedMaxOutputTokens: number | undefined,
): Promise<OpenedModelCall> {
  await run.heartbeat();
  const budget = run.budget;
  const boundsMoney = budget.maxMinorUnits !== undefined || budget.maxCallMinorUnits !== undefined;
  const price: ModelPrice | undefined = Object.hasOwn(prices, modelId) ? prices[modelId] : undefined;
  if (boundsMoney && price === undefined) {
    throw invalidArgument(
      `prices[${JSON.stringify(modelId)}]`,
      `run '${run.run}' bounds money, so every model it calls needs a price; add { inputPerMillion, outputPerMillion } for this model`,
    );
  }

  const remaining = run.remaining();
  if (remaining.tokens === 0 || remaining.minorUnits === 0) {
    throw new RunBudgetExhaustedError(run.run, remaining, remaining.tokens === 0 ? 'no tokens left' : 'no money left');
  }
  const tokenBound = least(budget.maxCallTokens, remaining.tokens);
  const moneyLeft = least(budget.maxCallMinorUnits, remaining.minorUnits);
  const moneyBound = moneyLeft === undefined || price === undefined || price.outputPerMillion === 0 ? undefined : tokensFor(moneyLeft, price.outputPerMillion);
  const bound = least(tokenBound, moneyBound);
  if (bound === 0) {
    throw new RunBudgetExhaustedError(run.run, remaining, tokenBound === 0 ? 'the per-call bound allows no token' : 'the money left buys no output token');
  }
  const maxOutputTokens = least(bound, requestedMaxOutputTokens);

  const estimateTokens = budget.maxCallTokens ?? maxOutputTokens;
  if (estimateTokens === undefined) {
    throw invalidArgument(
      'budget.maxCallTokens',
      `run '${run.run}' sets no per-call token bound and the call asks for no output limit, so a call that ends without a usage report could not be booked; set budget.maxCallTokens`,
    );
  }
  const estimateMinorUnits = budget.maxCallMinorUnits ?? (price === undefined ? 0 : Math.ceil((estimateTokens * dearestPerMillion(price)) / 1_000_000));
  const ticket = run.beginCall({ tokens: estimateTokens, minorUnits: Math.min(estimateMinorUnits, Number.MAX_SAFE_INTEGER) });

  return {
    maxOutputTokens,
    ticket,
    finish(counts) {
      if (counts === undefined) {
        ticket.fail();
        return;
      }
      ticket.finish({ tokens: counts.input + counts.output, minorUnits: price === undefined ? 0 : costOf(price, counts) });
    },
    fail: () => ticket.fail(),
  };
}

/** The smaller of two optional bounds; `undefined` only when both are. */
function least(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** Whole output tokens that `minorUnits` buys at `perMillion`. */
function tokensFor(minorUnits: number, perMillion: number): number {
  const tokens = (BigInt(minorUnits) * 1_000_000n) / BigInt(perMillion);
  return tokens > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(tokens);
}

/** A count from a provider: a non-negative safe integer, or `undefined` for anything else (absent, NaN, negative). */
export function countOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

import type { LanguageModelMiddleware } from 'ai';

import type { ActiveRun, RecordedSpend } from '../active-run.js';
import { openModelCall, type OpenedModelCall } from '../model-call.js';
import { parsePriceTable, type PriceTable } from '../model-price.js';
import { endingStream } from './ending-stream.js';
import { tokenCountsOf } from './usage.js';

type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;

/** Options of {@link quotaMiddleware}: `prices`, the price of each model by its `modelId` (see `ModelPrice`). */
export interface QuotaMiddlewareOptions {
  readonly prices?: PriceTable | undefined;
}

/**
 * A language-model middleware for the AI SDK's `wrapLanguageModel` that meters every call of the
 * wrapped model in `run` (from `withRun`). For each generate or stream call (each step of a
 * multi-step `generateText` or `streamText` is one call):
 *
 * - before it: heartbeats the pass (a subject halt stops the agent here with `RunWithheldError`),
 *   caps `maxOutputTokens` to what the per-call bound and the run's remaining tokens and money
 *   allow, and, with nothing left, throws `RunBudgetExhaustedError` without calling the model;
 * - after it: books the reported usage (input + output tokens, and money at `prices[modelId]`,
 *   in whole minor units rounded up). A stream is booked when it ends, from its last usage frame
 *   (a provider that repeats cumulative usage is counted once);
 * - a call that ends without a usage report (no report, a stream aborted or cancelled before its
 *   finish, a call that threw) books the per-call bound, marked as an estimate; an attempt that
 *   threw and is then retried by the SDK (`maxRetries`, the same prompt) takes its estimate back,
 *   so a failed attempt that was retried adds nothing.
 *
 * Create one per run: `wrapLanguageModel({ model, middleware: quotaMiddleware(run, { prices }) })`.
 * Throws `INVALID_ARGUMENT` naming a malformed price; a call of an unpriced model in a run whose
 * budget bounds money throws `INVALID_ARGUMENT` naming `prices["<modelId>"]`.
 */
export function quotaMiddleware(run: ActiveRun, options: QuotaMiddlewareOptions = {}): LanguageModelMiddleware {
  const prices = parsePriceTable(options.prices);
  // The call each transformed params object opened (wrapLanguageModel hands the same object on).
  const opened = new WeakMap<object, OpenedModelCall>();
  // The estimate booked for a failed attempt, by its prompt: the SDK retries with the same prompt array.
  const failedAttempts = new WeakMap<object, RecordedSpend[]>();

  const remember = (prompt: object, failed: RecordedSpend | undefined) => {
    if (failed === undefined) return;
    failedAttempts.set(prompt, [...(failedAttempts.get(prompt) ?? []), failed]);
  };
  const callOf = (params: CallOptions): OpenedModelCall => {
    const call = opened.get(params);
    if (call === undefined) throw new Error('quotaMiddleware: a call reached the model without passing transformParams; wrap the model with wrapLanguageModel');
    return call;
  };

  return {
    specificationVersion: 'v3',
    async transformParams({ params, model }) {
      // A retry of a failed attempt: that attempt adds nothing after all.
      failedAttempts.get(params.prompt)?.pop()?.retract();
      const call = await openModelCall(run, prices, model.modelId, params.maxOutputTokens);
      const capped: CallOptions = { ...params, ...(call.maxOutputTokens === undefined ? {} : { maxOutputTokens: call.maxOutputTokens }) };
      opened.set(capped, call);
      return capped;
    },
    async wrapGenerate({ doGenerate, params }) {
      const call = callOf(params);
      let result;
      try {
        result = await doGenerate();
      } catch (error) {
        remember(params.prompt, call.fail());
        throw error;
      }
      call.finish(tokenCountsOf(result.usage));
      return result;
    },
    async wrapStream({ doStream, params }) {
      const call = callOf(params);
      let result: StreamResult;
      try {
        result = await doStream();
      } catch (error) {
        remember(params.prompt, call.fail());
        throw error;
      }
      return { ...result, stream: endingStream(result.stream, (counts) => call.finish(counts)) };
    },
  };
}

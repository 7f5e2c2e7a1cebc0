import type { LanguageModelMiddleware } from 'ai';

import { parseCallCeilingOptions, reserveCeilingCall, type CallCeilingOptions, type CeilingCall } from '../call-ceiling.js';
import { estimateInputTokens } from '../input-tokens.js';
import { endingStream } from './ending-stream.js';
import { tokenCountsOf } from './usage.js';

type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type Prompt = CallOptions['prompt'];
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;

/**
 * Options of {@link callCeilingMiddleware}: the shared {@link CallCeilingOptions} (`plane`,
 * `tenant`, `agent`, `endUser`, `prices` by `modelId`, `leaseMs`, …) and `countInputTokens(prompt)`,
 * your own count of a call's input tokens (the AI SDK's `LanguageModelV3Prompt`; a non-negative
 * whole number, or a promise of one). Without it the input is estimated conservatively by
 * `estimateInputTokens` (src/adapters/input-tokens.ts): 3 per call, plus 4 per message and its
 * text at 3 ASCII characters a token, rounded up (1 to 4 per other character, by its UTF-8
 * length), plus the tool definitions' JSON the same way, and 2 000 per file part.
 */
export interface CallCeilingMiddlewareOptions extends CallCeilingOptions {
  readonly countInputTokens?: ((prompt: Prompt) => number | Promise<number>) | undefined;
}

/**
 * A language-model middleware for the AI SDK's `wrapLanguageModel` that meters every generate or
 * stream call of the wrapped model against the tenant's model-call ceilings (`plane.reserveCall`,
 * docs/design/rules.md#m3–#m7). Each call (each step of a multi-step call, each retry) is one call:
 *
 * - before it: reserves its worst case: the input tokens (counted or estimated) plus the call's
 *   `maxOutputTokens` and, for a model priced by `modelId`, that many tokens at its dearest rate.
 *   A call with no `maxOutputTokens` is given the cap that was reserved, so it can never pass its
 *   reservation. A refusal throws `ModelCallLimitedError` (`retryAtMs`, `retryAfterMs`) and the
 *   model is **not** called;
 * - after it: books the reported usage (input + output tokens, and the cost at the model's price in
 *   whole minor units rounded up); a call without a usage report books its worst case as an estimate;
 * - a call that throws gives its reservation back (nothing booked). A retry by the SDK is a new
 *   call with a new reservation;
 * - a stream holds its reservation until it ends: its finish part's usage is booked then; a stream
 *   cancelled, aborted or errored before it reported books its worst case as an estimate (an
 *   aborted stream is never booked as zero). A stream never read to its end nor cancelled keeps
 *   its reservation until the lease lapses, then the plane books its worst case.
 *
 * Use it alone (`wrapLanguageModel({ model, middleware: callCeilingMiddleware({ plane, tenant }) })`)
 * or with `quotaMiddleware` inside a run, **first** in the array so the run's cap applies within the
 * reservation: `middleware: [callCeilingMiddleware({ … }), quotaMiddleware(run, { prices })]`.
 * Throws `INVALID_ARGUMENT` naming a bad option; the plane's faults come out of the call as they are.
 */
export function callCeilingMiddleware(options: CallCeilingMiddlewareOptions): LanguageModelMiddleware {
  const ceiling = parseCallCeilingOptions(options, ['countInputTokens']);
  const count = options.countInputTokens;
  // The call each transformed params object reserved (wrapLanguageModel hands the same object on).
  const reserved = new WeakMap<object, CeilingCall>();
  const callOf = (params: CallOptions): CeilingCall => {
    const call = reserved.get(params);
    if (call === undefined) throw new Error('callCeilingMiddleware: a call reached the model without passing transformParams; wrap the model with wrapLanguageModel');
    return call;
  };

  return {
    specificationVersion: 'v3',
    async transformParams({ params, model }) {
      const inputTokens = count === undefined ? estimateInputTokens(params.prompt, [params.tools, params.responseFormat]) : await count(params.prompt);
      const call = await reserveCeilingCall(ceiling, model.modelId, inputTokens, params.maxOutputTokens);
      const capped: CallOptions = { ...params, maxOutputTokens: Math.min(call.maxOutputTokens, params.maxOutputTokens ?? Number.MAX_SAFE_INTEGER) };
      reserved.set(capped, call);
      return capped;
    },
    async wrapGenerate({ doGenerate, params }) {
      const call = callOf(params);
      let result;
      try {
        result = await doGenerate();
      } catch (error) {
        await call.release();
        throw error;
      }
      await call.finish(tokenCountsOf(result.usage));
      return result;
    },
    async wrapStream({ doStream, params }) {
      const call = callOf(params);
      let result: StreamResult;
      try {
        result = await doStream();
      } catch (error) {
        await call.release();
        throw error;
      }
      return { ...result, stream: endingStream(result.stream, (counts) => call.finish(counts)) };
    },
  };
}

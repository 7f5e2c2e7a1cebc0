import type { Model, ModelRequest, ModelResponse } from '@openai/agents';

import { requireIdentifier } from '../../core/identifiers.js';
import { parseCallCeilingOptions, reserveCeilingCall, type CallCeilingOptions, type CeilingCall } from '../call-ceiling.js';
import { estimateInputTokens } from '../input-tokens.js';
import { agentsTokenCounts } from './usage.js';

type StreamEvent = ReturnType<Model['getStreamedResponse']> extends AsyncIterable<infer E> ? E : never;

/**
 * Options of {@link meterModelCalls}: the shared {@link CallCeilingOptions} (`plane`, `tenant`,
 * `agent`, `endUser`, `prices` by model name, `leaseMs`, …), `modelName` (required: the model id
 * the ceilings and `prices` know the model by), and `countInputTokens(request)`, your own count of
 * a request's input tokens (the Agents SDK's `ModelRequest`; a non-negative whole number, or a
 * promise of one). Without it the input is estimated conservatively by `estimateInputTokens`
 * (src/adapters/input-tokens.ts): 3 per call, plus 4 per input item (and for the system
 * instructions) and its text at 3 ASCII characters a token, rounded up (1 to 4 per other
 * character), plus the tools', handoffs' and output type's JSON the same way, and 2 000 per image
 * or file.
 */
export interface MeterModelCallsOptions extends CallCeilingOptions {
  readonly modelName: string;
  readonly countInputTokens?: ((request: ModelRequest) => number | Promise<number>) | undefined;
}

/**
 * Wraps an Agents SDK `Model` so that every turn's model call is metered against the tenant's
 * model-call ceilings (`plane.reserveCall`, docs/design/rules.md#m3–#m7), the way
 * `callCeilingMiddleware` does for the AI SDK:
 *
 * - before the call: reserves its worst case (input tokens, counted or estimated, plus
 *   `modelSettings.maxTokens`, and its cost at the dearest rate when priced); a request without
 *   `maxTokens` is given the cap that was reserved. A refusal throws `ModelCallLimitedError` and
 *   the model is **not** called;
 * - `getResponse`: books the response's usage (tokens, and its cost at `prices[modelName]`, rounded
 *   up); a call that throws gives its reservation back (a retry by the Runner is a new call);
 * - `getStreamedResponse`: holds the reservation until the stream ends and books its
 *   `response_done` usage; a stream that fails before its first event gives the reservation back;
 *   one left early by the consumer, or that failed after it began, before it reported, books its
 *   worst case as an estimate.
 *
 * Inside a run, wrap it **around** `meterModel`: `meterModelCalls(meterModel(run, model, { … }), { … })`,
 * so a refused call never reaches the run's books and the run's cap applies within the reservation.
 * Throws `INVALID_ARGUMENT` naming a bad option (`modelName` included); the plane's faults come out
 * of the call as they are.
 */
export function meterModelCalls(model: Model, options: MeterModelCallsOptions): Model {
  const ceiling = parseCallCeilingOptions(options, ['modelName', 'countInputTokens']);
  const modelName = requireIdentifier('modelName', options.modelName);
  const count = options.countInputTokens;

  const reserve = async (request: ModelRequest): Promise<{ call: CeilingCall; capped: ModelRequest }> => {
    const inputTokens = count === undefined ? estimateOf(request) : await count(request);
    const asked = request.modelSettings.maxTokens ?? undefined;
    const call = await reserveCeilingCall(ceiling, modelName, inputTokens, asked);
    const maxTokens = Math.min(call.maxOutputTokens, asked ?? Number.MAX_SAFE_INTEGER);
    return { call, capped: { ...request, modelSettings: { ...request.modelSettings, maxTokens } } };
  };

  const metered: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const { call, capped } = await reserve(request);
      let response: ModelResponse;
      try {
        response = await model.getResponse(capped);
      } catch (error) {
        await call.release();
        throw error;
      }
      await call.finish(agentsTokenCounts(response.usage));
      return response;
    },
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const { call, capped } = await reserve(request);
      let began = false;
      let lastUsage: unknown;
      try {
        for await (const event of model.getStreamedResponse(capped)) {
          began = true;
          if (event.type === 'response_done') lastUsage = event.response.usage;
          yield event;
        }
      } catch (error) {
        if (!began) await call.release();
        throw error;
      } finally {
        // Ended, failed after it began, or left early by the consumer: book what was reported.
        await call.finish(lastUsage === undefined ? undefined : agentsTokenCounts(lastUsage));
      }
    },
  };
  if (model.getRetryAdvice !== undefined) metered.getRetryAdvice = model.getRetryAdvice.bind(model);
  return metered;
}

function estimateOf(request: ModelRequest): number {
  const input = typeof request.input === 'string' ? [request.input] : request.input;
  const messages = request.systemInstructions === undefined ? input : [request.systemInstructions, ...input];
  return estimateInputTokens(messages, [request.tools, request.handoffs, request.outputType]);
}

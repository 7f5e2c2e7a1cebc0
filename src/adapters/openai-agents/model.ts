import type { Model, ModelProvider, ModelRequest, ModelResponse } from '@openai/agents';

import type { ActiveRun, RecordedSpend } from '../active-run.js';
import { invalidArgument } from '../../core/errors.js';
import { openModelCall, type OpenedModelCall } from '../model-call.js';
import { parsePriceTable, type PriceTable } from '../model-price.js';
import { agentsTokenCounts } from './usage.js';

type StreamEvent = ReturnType<Model['getStreamedResponse']> extends AsyncIterable<infer E> ? E : never;

/**
 * Options of {@link meterModel}: `modelName`, the model's name in `prices` (required when the run's
 * budget bounds money), and `prices`, the price of each model by name (see `ModelPrice`).
 */
export interface MeterModelOptions {
  readonly modelName?: string | undefined;
  readonly prices?: PriceTable | undefined;
}

/**
 * Wraps an Agents SDK `Model` so that every turn's model call is metered in `run` (from `withRun`):
 *
 * - before the call: heartbeats the pass, so a subject halt stops the agent between turns with
 *   `RunWithheldError`; caps `modelSettings.maxTokens` to what the per-call bound and the run's
 *   remaining tokens and money allow; with nothing left, throws `RunBudgetExhaustedError` and the
 *   model is not called;
 * - after it: books the response's usage (input + output tokens, money at
 *   `prices[modelName]`, rounded up to a whole minor unit). A streamed response is booked from its
 *   `response_done` event (the last one, if a provider repeats it);
 * - a call that ends without usage (no report, a stream cut before `response_done`, a call that
 *   threw) books the per-call bound, marked as an estimate; an attempt that threw and is retried by
 *   the Runner (`modelSettings.retry`, the same input) takes its estimate back.
 *
 * Give the result as the agent's `model` (`new Agent({ model: meterModel(run, model, …) })`), or
 * use {@link meterModelProvider} for agents that name their model. Throws `INVALID_ARGUMENT` naming
 * a malformed price, or `modelName` when the run bounds money and no name was given.
 */
export function meterModel(run: ActiveRun, model: Model, options: MeterModelOptions = {}): Model {
  const prices = parsePriceTable(options.prices);
  const boundsMoney = run.budget.maxMinorUnits !== undefined || run.budget.maxCallMinorUnits !== undefined;
  if (options.modelName === undefined && boundsMoney) {
    throw invalidArgument('modelName', `run '${run.run}' bounds money, so its model needs a name to find in prices`);
  }
  const modelName = options.modelName ?? '';
  // The estimate booked for a failed attempt, by its input: the Runner retries with the same input.
  const failedAttempts = new Map<unknown, RecordedSpend[]>();
  const remember = (input: unknown, failed: RecordedSpend | undefined) => {
    if (failed !== undefined) failedAttempts.set(input, [...(failedAttempts.get(input) ?? []), failed]);
  };
  const open = async (request: ModelRequest): Promise<{ call: OpenedModelCall; capped: ModelRequest }> => {
    failedAttempts.get(request.input)?.pop()?.retract();
    const call = await openModelCall(run, prices, modelName, request.modelSettings.maxTokens);
    const capped: ModelRequest =
      call.maxOutputTokens === undefined ? request : { ...request, modelSettings: { ...request.modelSettings, maxTokens: call.maxOutputTokens } };
    return { call, capped };
  };

  const metered: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const { call, capped } = await open(request);
      let response: ModelResponse;
      try {
        response = await model.getResponse(capped);
      } catch (error) {
        remember(request.input, call.fail());
        throw error;
      }
      call.finish(agentsTokenCounts(response.usage));
      return response;
    },
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const { call, capped } = await open(request);
      let lastUsage: unknown;
      try {
        for await (const event of model.getStreamedResponse(capped)) {
          if (event.type === 'response_done') lastUsage = event.response.usage;
          yield event;
        }
      } catch (error) {
        if (lastUsage === undefined) remember(request.input, call.fail());
        throw error;
      } finally {
        // Ended, failed after its report, or left early by the consumer: book what was reported.
        call.finish(lastUsage === undefined ? undefined : agentsTokenCounts(lastUsage));
      }
    },
  };
  if (model.getRetryAdvice !== undefined) metered.getRetryAdvice = model.getRetryAdvice.bind(model);
  return metered;
}

/**
 * Wraps an Agents SDK `ModelProvider` (such as `new OpenAIProvider()`) so that every model it
 * hands out is metered in `run` by {@link meterModel}, priced by its name in `prices`. Give it to
 * the Runner: `new Runner({ modelProvider: meterModelProvider(run, provider, { prices }) })`.
 * A model asked for without a name is looked up as `defaultModelName` (default `'default'`).
 */
export function meterModelProvider(
  run: ActiveRun,
  provider: ModelProvider,
  options: { readonly prices?: PriceTable | undefined; readonly defaultModelName?: string | undefined } = {},
): ModelProvider {
  const prices = parsePriceTable(options.prices);
  return {
    async getModel(modelName?: string) {
      const model = await provider.getModel(modelName);
      return meterModel(run, model, { modelName: modelName ?? options.defaultModelName ?? 'default', prices });
    },
  };
}

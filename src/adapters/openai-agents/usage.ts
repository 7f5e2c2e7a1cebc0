import { countOf } from '../model-call.js';
import type { TokenCounts } from '../model-price.js';

/**
 * Reads the usage of one Agents SDK model response (`ModelResponse.usage`, or the `usage` of a
 * `response_done` stream event) as {@link TokenCounts}, or `undefined` when it reports no tokens,
 * so the call is booked at its per-call bound rather than as zero (docs/design/decisions.md "Usage
 * never reads as zero by absence").
 *
 * OpenAI's definitions are used as they are: `inputTokens` already holds the cached tokens
 * (`inputTokensDetails.cached_tokens`) and `outputTokens` the reasoning tokens
 * (`outputTokensDetails.reasoning_tokens`), so neither is added again; cached tokens are only
 * priced at the cache-read rate. A report of 0 input and 0 output tokens is what the SDK builds
 * when a provider sent none (`new Usage()`), and no real call reads no input, so it counts as missing.
 */
export function agentsTokenCounts(usage: unknown): TokenCounts | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const report = usage as Record<string, unknown>;
  const input = countOf(report.inputTokens ?? report.input_tokens);
  const output = countOf(report.outputTokens ?? report.output_tokens);
  if (input === undefined || output === undefined || input + output === 0) return undefined;
  const cacheRead = sumOf(report.inputTokensDetails ?? report.input_tokens_details, 'cached_tokens');
  return { input, output, cacheRead: Math.min(cacheRead, input), cacheWrite: 0 };
}

// Details come as one record, or one record per request in an aggregated usage.
function sumOf(details: unknown, key: string): number {
  const records = Array.isArray(details) ? details : [details];
  let sum = 0;
  for (const record of records) {
    if (typeof record === 'object' && record !== null) sum += countOf((record as Record<string, unknown>)[key]) ?? 0;
  }
  return sum;
}

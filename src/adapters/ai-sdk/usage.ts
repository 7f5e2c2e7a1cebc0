import { countOf } from '../model-call.js';
import type { TokenCounts } from '../model-price.js';

/**
 * Reads a language model's usage report (the AI SDK's `LanguageModelV3Usage`, or the flat V2
 * shape) as {@link TokenCounts}, or `undefined` when it does not report both input and output
 * tokens as counts (absent, `NaN`, negative), or reports 0 of both (no real call reads no input),
 * so the call is booked at its per-call bound instead of as zero (docs/design/decisions.md "Usage
 * never reads as zero by absence").
 *
 * The provider's own totals are used: `inputTokens.total` already holds the cached tokens
 * (`cacheRead`, `cacheWrite`) and `outputTokens.total` the reasoning tokens, so neither is added
 * again. When a total is missing, it is the sum of its parts (`noCache + cacheRead + cacheWrite`,
 * `text + reasoning`).
 */
export function tokenCountsOf(usage: unknown): TokenCounts | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const report = usage as Record<string, unknown>;
  if (typeof report.inputTokens === 'number' || typeof report.outputTokens === 'number') return flatCounts(report);
  const input = (report.inputTokens ?? {}) as Record<string, unknown>;
  const output = (report.outputTokens ?? {}) as Record<string, unknown>;
  const cacheRead = countOf(input.cacheRead) ?? 0;
  const cacheWrite = countOf(input.cacheWrite) ?? 0;
  const noCache = countOf(input.noCache);
  const inputTotal = countOf(input.total) ?? (noCache === undefined ? undefined : noCache + cacheRead + cacheWrite);
  const text = countOf(output.text);
  const outputTotal = countOf(output.total) ?? (text === undefined ? undefined : text + (countOf(output.reasoning) ?? 0));
  if (inputTotal === undefined || outputTotal === undefined || inputTotal + outputTotal === 0) return undefined;
  return { input: inputTotal, output: outputTotal, cacheRead, cacheWrite };
}

// The LanguageModelV2 shape: `inputTokens` holds the cached ones (`cachedInputTokens`), and
// `outputTokens` the reasoning ones.
function flatCounts(report: Record<string, unknown>): TokenCounts | undefined {
  const input = countOf(report.inputTokens);
  const output = countOf(report.outputTokens);
  if (input === undefined || output === undefined || input + output === 0) return undefined;
  return { input, output, cacheRead: countOf(report.cachedInputTokens) ?? 0, cacheWrite: 0 };
}

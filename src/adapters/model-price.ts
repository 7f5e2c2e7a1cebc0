import { describe, isAmount, MAX_AMOUNT } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';

/**
 * What one model charges, in the deployment's minor unit (for example micro-USD) **per million
 * tokens**, each a non-negative safe integer. At $3 / $15 per million input / output tokens in
 * micro-USD: `{ inputPerMillion: 3_000_000, outputPerMillion: 15_000_000 }`.
 * - `inputPerMillion`: input (prompt) tokens that were not read from or written to a cache;
 * - `outputPerMillion`: output tokens, reasoning tokens included (both SDKs count reasoning inside
 *   the output, so they are priced once, here);
 * - `cacheReadPerMillion`: input tokens read from the provider's prompt cache; default `inputPerMillion`;
 * - `cacheWritePerMillion`: input tokens written to the cache; default `inputPerMillion`.
 */
export interface ModelPrice {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
  readonly cacheReadPerMillion?: number | undefined;
  readonly cacheWritePerMillion?: number | undefined;
}

/** A price per model id, as the SDK names the model (`model.modelId` in the AI SDK, the model name in the Agents SDK). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * One call's token counts, as the adapters read them from a provider's usage report. `input` is
 * every input token, cached ones included; `cacheRead` and `cacheWrite` are the parts of `input`
 * that were read from or written to a cache; `output` is every output token, reasoning included.
 */
export interface TokenCounts {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/**
 * Validates a price table, naming the bad entry (`prices["gpt-4o"].outputPerMillion`). Throws
 * `INVALID_ARGUMENT`.
 */
export function parsePriceTable(value: unknown, field = 'prices'): PriceTable {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of model id → price per million tokens, got ${describe(value)}`);
  }
  const table: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(value as Record<string, unknown>)) {
    table[model] = parsePrice(price, `${field}[${JSON.stringify(model)}]`);
  }
  return table;
}

/** Validates one {@link ModelPrice}; throws `INVALID_ARGUMENT` naming `field.member`. */
export function parsePrice(value: unknown, field: string): ModelPrice {
  if (typeof value !== 'object' || value === null) throw invalidArgument(field, `must be { inputPerMillion, outputPerMillion }, got ${describe(value)}`);
  const record = value as Record<string, unknown>;
  const amount = (member: string, required: boolean): number | undefined => {
    const raw = record[member];
    if (raw === undefined && !required) return undefined;
    if (!isAmount(raw)) {
      throw invalidArgument(`${field}.${member}`, `must be a non-negative integer of minor units per million tokens, got ${describe(raw)}`);
    }
    return raw;
  };
  return {
    inputPerMillion: amount('inputPerMillion', true) as number,
    outputPerMillion: amount('outputPerMillion', true) as number,
    cacheReadPerMillion: amount('cacheReadPerMillion', false),
    cacheWritePerMillion: amount('cacheWritePerMillion', false),
  };
}

/**
 * What `counts` cost at `price`, in whole minor units **rounded up** (a fraction of a minor unit is
 * charged as one). Computed exactly in integers (BigInt), capped at `MAX_AMOUNT`.
 */
export function costOf(price: ModelPrice, counts: TokenCounts): number {
  const cacheRead = Math.min(counts.cacheRead, counts.input);
  const cacheWrite = Math.min(counts.cacheWrite, counts.input - cacheRead);
  const uncached = counts.input - cacheRead - cacheWrite;
  const microTotal =
    BigInt(uncached) * BigInt(price.inputPerMillion) +
    BigInt(cacheRead) * BigInt(price.cacheReadPerMillion ?? price.inputPerMillion) +
    BigInt(cacheWrite) * BigInt(price.cacheWritePerMillion ?? price.inputPerMillion) +
    BigInt(counts.output) * BigInt(price.outputPerMillion);
  const cost = (microTotal + 999_999n) / 1_000_000n;
  return cost > BigInt(MAX_AMOUNT) ? MAX_AMOUNT : Number(cost);
}

/** The most one token can cost at `price` (any kind), per million tokens. */
export function dearestPerMillion(price: ModelPrice): number {
  return Math.max(price.inputPerMillion, price.outputPerMillion, price.cacheReadPerMillion ?? 0, price.cacheWritePerMillion ?? 0);
}

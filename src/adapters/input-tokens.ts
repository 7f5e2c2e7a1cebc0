// The conservative estimate of a prompt's input tokens that the model-call ceiling adapters reserve
// with when the caller gives no counter of its own (src/adapters/call-ceiling.ts). It errs high:
// real tokenisers average about 4 characters of English text per token; 3 leaves room for code,
// JSON and other languages.

/** Characters of prompt text counted as one token: 3 (real tokenisers average about 4 on English text). */
export const CHARS_PER_TOKEN = 3;

/** Tokens added for each message (its role and the provider's framing): 4. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Tokens added once per call (the framing of the reply): 3. */
export const CALL_OVERHEAD_TOKENS = 3;

/**
 * Tokens counted for each file, image or audio part, whatever its size: 2 000 (an image at high
 * detail is under about 1 600 tokens at OpenAI and Anthropic). A PDF or a long recording can take
 * far more: give your own counter (`countInputTokens`) for prompts that carry them.
 */
export const FILE_PART_TOKENS = 2_000;

// The `type` of the parts both SDKs send a file, image or audio as.
const FILE_TYPES = new Set(['file', 'image', 'audio', 'input_image', 'input_file', 'input_audio', 'image_url']);

/**
 * The estimated input tokens of a call whose prompt is `messages`, plus `extras` sent with it (the
 * tool definitions, an output schema): {@link CALL_OVERHEAD_TOKENS}, then per message
 * {@link MESSAGE_OVERHEAD_TOKENS} plus its text at {@link CHARS_PER_TOKEN} characters a token
 * (rounded up), and per extra its text the same way. The text of a value is every string, number
 * and boolean in it and every member name (so a tool call's JSON arguments count as sent); a part
 * whose `type` is a file, image or audio part, and any binary value, counts
 * {@link FILE_PART_TOKENS} instead of its bytes. Answers a non-negative safe integer.
 */
export function estimateInputTokens(messages: readonly unknown[], extras: readonly unknown[] = []): number {
  let tokens = CALL_OVERHEAD_TOKENS;
  for (const message of messages) tokens += MESSAGE_OVERHEAD_TOKENS + tokensOf(message);
  for (const extra of extras) tokens += tokensOf(extra);
  return Math.min(tokens, Number.MAX_SAFE_INTEGER);
}

function tokensOf(value: unknown): number {
  const size = { chars: 0, files: 0 };
  measure(value, size, new WeakSet());
  return Math.ceil(size.chars / CHARS_PER_TOKEN) + size.files * FILE_PART_TOKENS;
}

function measure(value: unknown, size: { chars: number; files: number }, seen: WeakSet<object>): void {
  if (typeof value === 'string') {
    size.chars += value.length;
    return;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    size.chars += String(value).length;
    return;
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    size.files += 1;
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) measure(item, size, seen);
    return;
  }
  const record = value as Record<string, unknown>;
  if (typeof record.type === 'string' && FILE_TYPES.has(record.type)) {
    size.files += 1;
    return;
  }
  for (const [key, member] of Object.entries(record)) {
    if (member === undefined) continue;
    size.chars += key.length;
    measure(member, size, seen);
  }
}

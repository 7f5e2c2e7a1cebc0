// The conservative estimate of a prompt's input tokens that the model-call ceiling adapters reserve
// with when the caller gives no counter of its own (src/adapters/call-ceiling.ts). It errs high:
// real tokenisers average about 4 characters of English text per token; 3 leaves room for code and
// JSON. Text outside ASCII is counted per character by its UTF-8 length, since byte-level
// tokenisers split it far finer: cl100k_base takes about 1.2 tokens per Chinese character, 1 per
// Devanagari one and up to 4 per emoji, so 3 characters a token would reserve a third of it.

/** Characters of ASCII prompt text counted as one token: 3 (real tokenisers average about 4 on English text). */
export const CHARS_PER_TOKEN = 3;

/**
 * Tokens counted for each character outside ASCII, by its UTF-8 length: 1 for 2 bytes (accented
 * Latin, Greek, Cyrillic, Arabic, Hebrew), 2 for 3 bytes (Chinese, Japanese, Korean, Indic
 * scripts, most symbols), 4 for 4 bytes (emoji and other characters beyond the BMP).
 */
const NON_ASCII_TOKENS = Object.freeze({ twoBytes: 1, threeBytes: 2, fourBytes: 4 });

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

// The `type` of the parts both SDKs send a file, image or audio as: in a message (`file`, `image`,
// `audio`, the Responses API's `input_*` and `image_url`), in a tool's result (the AI SDK's
// `media` and its `file-*` and `image-*` parts) and a computer-use screenshot (the Agents SDK's
// `computer_screenshot`). Each is counted whole, by data, URL or id alike.
const FILE_TYPES = new Set([
  'file',
  'image',
  'audio',
  'input_image',
  'input_file',
  'input_audio',
  'image_url',
  'media',
  'file-data',
  'file-url',
  'file-id',
  'image-data',
  'image-url',
  'image-file-id',
  'computer_screenshot',
]);

/**
 * The estimated input tokens of a call whose prompt is `messages`, plus `extras` sent with it (the
 * tool definitions, an output schema): {@link CALL_OVERHEAD_TOKENS}, then per message
 * {@link MESSAGE_OVERHEAD_TOKENS} plus its text at {@link CHARS_PER_TOKEN} ASCII characters a token
 * (rounded up) and {@link NON_ASCII_TOKENS} for each other character, and per extra its text the same way. The text of a value is every string, number
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

interface Size {
  chars: number;
  wide: number;
  files: number;
}

function tokensOf(value: unknown): number {
  const size: Size = { chars: 0, wide: 0, files: 0 };
  measure(value, size, new WeakSet());
  return Math.ceil(size.chars / CHARS_PER_TOKEN) + size.wide + size.files * FILE_PART_TOKENS;
}

// Adds a string: ASCII characters to `chars`, the tokens of every other character to `wide`.
function measureText(text: string, size: Size): void {
  if (!NON_ASCII.test(text)) {
    size.chars += text.length;
    return;
  }
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) size.chars += 1;
    else if (unit < 0x800) size.wide += NON_ASCII_TOKENS.twoBytes;
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      size.wide += NON_ASCII_TOKENS.fourBytes;
      index += 1;
    } else size.wide += NON_ASCII_TOKENS.threeBytes;
  }
}

const NON_ASCII = /[^\x00-\x7f]/;

function measure(value: unknown, size: Size, seen: WeakSet<object>): void {
  if (typeof value === 'string') {
    measureText(value, size);
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
    measureText(key, size);
    measure(member, size, seen);
  }
}

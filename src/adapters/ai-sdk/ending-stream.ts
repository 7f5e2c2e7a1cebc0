import type { LanguageModelMiddleware } from 'ai';

import { tokenCountsOf } from './usage.js';
import type { TokenCounts } from '../model-price.js';

type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;

/** One part of a language model's stream, as the AI SDK's middleware sees it. */
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/**
 * Passes `source` through unchanged and calls `end` once, before the consumer sees the stream end:
 * closed, errored or cancelled, with the token counts of the last finish part (a provider that
 * repeats cumulative usage is counted once), or with `undefined` when no finish part reported.
 * Both metering middlewares book a stream through it.
 */
export function endingStream(source: ReadableStream<StreamPart>, end: (counts: TokenCounts | undefined) => unknown): ReadableStream<StreamPart> {
  const reader = source.getReader();
  let lastUsage: unknown;
  const ended = () => end(lastUsage === undefined ? undefined : tokenCountsOf(lastUsage));
  return new ReadableStream<StreamPart>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        await ended();
        controller.error(error);
        return;
      }
      if (next.done) {
        await ended();
        controller.close();
        return;
      }
      if (next.value.type === 'finish') lastUsage = next.value.usage;
      controller.enqueue(next.value);
    },
    async cancel(reason) {
      await ended();
      await reader.cancel(reason);
    },
  });
}

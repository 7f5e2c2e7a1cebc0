import type { IncomingMessage } from 'node:http';

/*
 * A request can be answered before its body has arrived: a body whose `content-length` is over the
 * limit answers 413 from its head alone, an unknown key 401 before the body is read. Closing the
 * connection then, with the caller's bytes still coming in, makes the kernel reset it, and a
 * caller still writing (Node's `fetch` among them) meets `EPIPE` and never reads the answer. So the
 * answer waits while the rest of the body is read and thrown away, within a bound, so that a
 * caller cannot hold a connection open by sending forever.
 */

/**
 * How much of a body the server reads and throws away after deciding to refuse it, before it
 * answers: `maxBytes` bytes more, or `maxMs` ms, whichever comes first. Past either bound the
 * server answers at once and closes the connection; a caller still sending may then miss the answer.
 */
export interface BodyDrainBounds {
  readonly maxBytes: number;
  readonly maxMs: number;
}

/** How a drain ended: the body was read to its end, a bound was reached, or the caller went away. */
export type DrainOutcome = 'read' | 'bounded' | 'gone';

/**
 * Reads and discards what is left of `request`'s body, resolving when it has ended (`'read'`), when
 * `bounds` were reached (`'bounded'`; the caller should close the connection after answering), or
 * when the connection closed or failed (`'gone'`). A body already read to its end resolves
 * `'read'` at once. Never rejects.
 */
export function drainBody(request: IncomingMessage, bounds: BodyDrainBounds): Promise<DrainOutcome> {
  if (request.complete || request.readableEnded) return Promise.resolve('read');
  if (request.destroyed) return Promise.resolve('gone');
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (outcome: DrainOutcome) => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onGone);
      request.off('close', onGone);
      // Stop reading past a bound: whatever more arrives is the connection's to lose.
      if (outcome === 'bounded') request.pause();
      resolve(outcome);
    };
    const onData = (chunk: Buffer | string) => {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      if (bytes > bounds.maxBytes) finish('bounded');
    };
    const onEnd = () => finish('read');
    const onGone = () => finish(request.complete ? 'read' : 'gone');
    const timer = setTimeout(() => finish('bounded'), bounds.maxMs);
    timer.unref();
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', onGone);
    request.once('close', onGone);
    request.resume();
  });
}

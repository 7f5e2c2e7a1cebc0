import { request } from 'undici';

/** One request as the client sends it: a method, its headers, and a JSON body when there is one. */
export interface TransportRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  /**
   * Ends the request when it aborts (a waiting admission the caller gives up;
   * docs/design/rules.md#w31).
   */
  readonly signal?: AbortSignal | undefined;
}

/** What the client reads of an answer: the HTTP status and the whole body as text. */
export interface TransportAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * Sends one request and reads the whole answer. Rejects when the server cannot be reached or the
 * connection breaks before the body is read; an HTTP error status is an answer, not a rejection.
 */
export type Transport = (url: string, init: TransportRequest) => Promise<TransportAnswer>;

/**
 * The client's default transport: undici's `request` on its global keep-alive pool. Node's
 * built-in `fetch` is the same undici under WHATWG streams, Request/Response objects and an
 * AbortSignal per call; on Node 20 that cost about 0.7 ms of CPU per request on the bench machine
 * against about 0.1 ms for `request`, which made the caller's own process the slowest part of an
 * HTTP admission cycle (`npm run bench -- --only http`).
 */
export const undiciTransport: Transport = async (url, init) => {
  const answer = await request(url, {
    method: init.method as 'GET',
    headers: init.headers,
    body: init.body,
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
  return { status: answer.statusCode, body: await answer.body.text() };
};

/** A transport over a `fetch` (a test's `app.inject`, or a fetch the caller instruments). */
export function fetchTransport(doFetch: typeof globalThis.fetch): Transport {
  return async (url, init) => {
    const response = await doFetch(url, {
      method: init.method,
      headers: init.headers,
      ...(init.body === undefined ? {} : { body: init.body }),
      ...(init.signal === undefined ? {} : { signal: init.signal }),
    });
    return { status: response.status, body: await response.text() };
  };
}

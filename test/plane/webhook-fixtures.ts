import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';


/**
 * The receiver's verifier of docs/guides/webhooks.md, word for word: node:crypto only. True when
 * one `v1` signature of `webhook-signature` is the HMAC-SHA256 of `id.timestamp.body` under the
 * secret, and the timestamp is within 5 minutes of `nowMs`.
 */
export function verifyWebhook(secret: string, headers: Record<string, string | undefined>, body: string, nowMs = Date.now()): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures || Math.abs(nowMs / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** One request a {@link Receiver} got. */
export interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly status: number;
}

/** A local HTTP endpoint: answers `status` (or holds each request until `release`), and keeps what it got. */
export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  status: number;
  /** While true, requests wait until {@link release}. */
  hold: boolean;
  release(): void;
  /** How many requests wait for {@link release}. */
  held(): number;
  close(): Promise<void>;
}

function flat(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
}

/** Starts a {@link Receiver} on a free local port. */
export async function startReceiver(): Promise<Receiver> {
  let waiting: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    status: 200,
    hold: false,
    release() {
      const released = waiting;
      waiting = [];
      for (const go of released) go();
    },
    held: () => waiting.length,
    close: async () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (): void => {
        const status = receiver.status;
        receiver.received.push({ headers: flat(request.headers), body: Buffer.concat(chunks).toString('utf8'), status });
        response.writeHead(status).end();
      };
      if (receiver.hold) waiting.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.keepAliveTimeout = 100;
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

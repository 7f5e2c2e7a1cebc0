import { spawn } from 'node:child_process';
import { connect, type AddressInfo, type Socket } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { DEFAULT_BODY_LIMIT_BYTES } from '../../src/http/build-app.js';
import { serviceFixture, type ServiceFixture } from './http-fixtures.js';

// A body over the limit is refused from its content-length, while the caller is still sending it.
// The server reads the rest of that body and throws it away before it answers 413, within a bound
// (build-app.ts `bodyDrain`), so the caller's upload never runs into a closed connection and the
// caller always gets to read the 413.

const TWO_MB = 2 * 1024 * 1024;

let fixture: ServiceFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function listening(options: Parameters<typeof serviceFixture>[0] = {}): Promise<{ fixture: ServiceFixture; port: number }> {
  fixture = await serviceFixture(options);
  await fixture.app.listen({ host: '127.0.0.1', port: 0 });
  return { fixture, port: (fixture.app.server.address() as AddressInfo).port };
}

/** How the other process sends: Node's own `fetch`, or a bare TCP socket that writes the whole request before it reads. */
type Sender = 'fetch' | 'socket';

/**
 * Sends `attempts` 2 MB admissions from another process, one after the other, and answers what
 * each one got: the status and the problem's `code`, `field` and `limit`, or the error the sender
 * met. Another process, because the race is between two event loops: the server's answer and
 * close, and the sender still writing. With `fetch` the sender reads while it writes, so a closed
 * connection loses some of the answers (the issue as users saw it); the bare socket writes the
 * whole body before it reads, so a server that stops reading after its 413 loses every answer.
 */
function sendFromAnotherProcess(sender: Sender, port: number, key: string, attempts: number): Promise<readonly object[]> {
  const script = `
    const net = require('node:net');
    const [sender, port, key, attempts, size] = process.argv.slice(1);
    const body = JSON.stringify({ tenant: 'acme', budget: { maxTokens: 1 }, padding: 'x'.repeat(Number(size)) });
    const answer = (status, text) => {
      const problem = JSON.parse(text);
      return { status, code: problem.code, field: problem.field, limit: problem.limit };
    };
    const viaFetch = async () => {
      const response = await fetch('http://127.0.0.1:' + port + '/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key },
        body,
      });
      return answer(response.status, await response.text());
    };
    const viaSocket = () =>
      new Promise((resolve, reject) => {
        const head = 'POST /v1/runs HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\nauthorization: Bearer ' + key +
          '\\r\\ncontent-type: application/json\\r\\ncontent-length: ' + Buffer.byteLength(body) + '\\r\\nconnection: close\\r\\n\\r\\n';
        const socket = net.connect(Number(port), '127.0.0.1');
        socket.pause();
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk) => (text += chunk));
        socket.once('error', reject);
        socket.write(head + body, (error) => (error ? reject(error) : socket.resume()));
        socket.once('end', () => {
          const [top, problem] = text.split('\\r\\n\\r\\n');
          resolve(answer(Number(top.split(' ')[1]), problem));
        });
      });
    (async () => {
      const seen = [];
      for (let i = 0; i < Number(attempts); i++) {
        try {
          seen.push(await (sender === 'fetch' ? viaFetch() : viaSocket()));
        } catch (error) {
          seen.push({ error: String(error), cause: String(error.code || (error.cause && (error.cause.code || error.cause.message))) });
        }
      }
      process.stdout.write(JSON.stringify(seen));
    })();
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, sender, String(port), key, String(attempts), String(TWO_MB)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as object[]) : reject(new Error(`the sender exited with ${code}`))));
  });
}

/** A bare connection to the server: what it has read so far, and when the server closed it. */
interface RawConnection {
  readonly socket: Socket;
  text(): string;
  /** Resolves when the connection closes, by the server's end or reset. */
  readonly closed: Promise<void>;
}

function rawConnection(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      // A reset while still writing is the server having closed; `closed` reports it.
      socket.on('error', () => undefined);
      resolve({ socket, text: () => received, closed: new Promise<void>((done) => socket.once('close', () => done())) });
    });
    socket.once('error', reject);
  });
}

function postHead(key: string, contentLength: number): string {
  return (
    `POST /v1/runs HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\n` +
    `content-type: application/json\r\ncontent-length: ${contentLength}\r\n\r\n`
  );
}

describe('a body over the limit', () => {
  for (const sender of ['fetch', 'socket'] as const) {
    it(`sent 20 times from another process (${sender === 'fetch' ? "Node's fetch" : 'a socket that writes it all before reading'}) answers 413 PAYLOAD_TOO_LARGE naming the limit every time`, async () => {
      const { fixture, port } = await listening();
      const seen = await sendFromAnotherProcess(sender, port, fixture.key.runAcme.secret, 20);
      expect(seen.filter((each) => 'error' in each)).toEqual([]);
      expect(seen).toEqual(Array.from({ length: 20 }, () => ({ status: 413, code: 'PAYLOAD_TOO_LARGE', field: 'body', limit: DEFAULT_BODY_LIMIT_BYTES })));
    });
  }

  it('sent past the drain bound in bytes has its connection closed once the bound is read', async () => {
    const { fixture, port } = await listening({ bodyDrain: { maxBytes: 256 * 1024, maxMs: 600_000 } });
    const connection = await rawConnection(port);
    connection.socket.write(postHead(fixture.key.runAcme.secret, 64 * TWO_MB));
    // 4 MB of a 128 MB body, far past the 256 KiB the server reads after deciding: it stops
    // reading, answers and closes, instead of waiting for the rest.
    for (let sent = 0; sent < 2 * TWO_MB; sent += 64 * 1024) connection.socket.write('x'.repeat(64 * 1024));
    await connection.closed;
  });

  it('sent slower than the drain bound in time is answered 413 when the time is up, and its connection closed', async () => {
    const { fixture, port } = await listening({ bodyDrain: { maxBytes: 16 * 1024 * 1024, maxMs: 200 } });
    const connection = await rawConnection(port);
    connection.socket.write(postHead(fixture.key.runAcme.secret, TWO_MB));
    connection.socket.write('x'.repeat(1024));
    // The rest of the body never comes: the server gives up on it rather than wait forever.
    await connection.closed;
    expect(connection.text()).toMatch(/^HTTP\/1\.1 413 /);
    expect(connection.text()).toMatch(/connection: close/i);
  });
});

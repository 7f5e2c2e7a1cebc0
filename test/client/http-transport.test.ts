import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { undiciTransport } from '../../src/client/http-transport.js';
import { QuotaError } from '../../src/core/errors.js';
import { serviceFixture } from '../http/http-fixtures.js';

describe("the client's default transport (undici request, no fetch given)", () => {
  it('sends the method, headers and body, and reads any status as an answer with its whole body', async () => {
    const seen: { method?: string; type?: string; body: string }[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        seen.push({ method: request.method, type: request.headers['content-type'], body });
        response.statusCode = request.url === '/missing' ? 404 : 200;
        response.end(JSON.stringify({ echoed: body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const posted = await undiciTransport(`${base}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(posted).toEqual({ status: 200, body: JSON.stringify({ echoed: '{"a":1}' }) });
      const missing = await undiciTransport(`${base}/missing`, { method: 'GET', headers: {} });
      expect(missing).toEqual({ status: 404, body: JSON.stringify({ echoed: '' }) });
      expect(seen).toEqual([
        { method: 'POST', type: 'application/json', body: '{"a":1}' },
        { method: 'GET', type: undefined, body: '' },
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a port nobody listens on is STORE_UNAVAILABLE naming the server, without a fetch stub', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = createClient({ url: `http://127.0.0.1:${port}`, key: 'qp_x' });
    const error = await client.tenants().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuotaError);
    expect((error as QuotaError).code).toBe('STORE_UNAVAILABLE');
    expect((error as QuotaError).message).toContain(`http://127.0.0.1:${port}`);
  });

  it("a body over the server's limit is INVALID_ARGUMENT naming the body and the limit in bytes, not a failed connection", async () => {
    const fixture = await serviceFixture({ bodyLimitBytes: 4096 });
    try {
      await fixture.app.listen({ host: '127.0.0.1', port: 0 });
      const client = createClient({ url: `http://127.0.0.1:${(fixture.app.server.address() as AddressInfo).port}`, key: fixture.key.opAll.secret });
      // About 2 MB of quota: far past the 4 KiB this server accepts.
      const agents = Object.fromEntries(Array.from({ length: 8000 }, (_, i) => [`agent-${i}-${'a'.repeat(200)}`, { maxConcurrentRuns: 1 }]));
      const error = await client.setQuota('acme', { maxConcurrentRuns: 5, agents }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).code).toBe('INVALID_ARGUMENT');
      expect((error as QuotaError).details).toMatchObject({ field: 'body', limit: 4096, status: 413 });
      expect((error as QuotaError).message).toMatch(/^body: .*4096 bytes/);
      expect(await client.getQuota('acme')).toBeNull();
    } finally {
      await fixture.close();
    }
  });
});

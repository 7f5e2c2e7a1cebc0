import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';

import type { Plane } from '../../src/plane/plane.js';
import { bearer, serviceFixture } from './http-fixtures.js';

describe('closing the app (what serve does on SIGTERM)', () => {
  it('lets a request already in flight finish with its answer before close resolves', async () => {
    const base = await serviceFixture();
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inside = new Promise<void>((resolve) => (started = resolve));
    const slow: Plane = {
      ...base.plane,
      usage: async (input) => {
        started();
        await gate;
        return base.plane.usage(input);
      },
    };
    await base.app.close();
    const f = await serviceFixture({ plane: slow, store: base.store, keys: base.keys });
    await f.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = f.app.server.address() as AddressInfo;

    const answer = fetch(`http://127.0.0.1:${port}/v1/usage`, { headers: bearer(base.key.runAcme) });
    await inside;
    let closed = false;
    const closing = f.app.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    release();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { tenant: string }).tenant).toBe('acme');
    await closing;
    expect(closed).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    await f.close();
    await base.store.close();
  });
});

import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { requestIdGenerator } from '../../src/http/request-id.js';

describe('request ids drawn from a pool of random bytes', () => {
  afterEach(() => vi.restoreAllMocks());

  it('are req_<ULID>, sort in the order they were made, and draw fresh randomness past each refill of the pool', () => {
    // A new millisecond per id makes ulid draw 16 random characters each time: 1,000 ids take
    // 16,000 bytes, about 60 refills of the 256-byte pool. A pool that was never refilled would
    // repeat its random part every 16 ids.
    let nowMs = 1_767_600_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => (nowMs += 1));
    const next = requestIdGenerator();
    const plain = { headers: {} } as IncomingMessage;
    const ids = Array.from({ length: 1_000 }, () => next(plain));
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(-16))).size).toBe(ids.length);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';

/** 2026-01-05T08:00:00Z in ms. */
export const T0 = 1_767_600_000_000;
export const HOUR_MS = 3_600_000;
export const ALICE = { actor: 'ops-alice', basis: 'asserted' } as const;
export const BOB = { actor: 'ops-bob', basis: 'authenticated' } as const;

/** A plane over a private in-memory SQLite store, with a manual clock at {@link T0}. */
export interface MemoryPlane {
  readonly plane: Plane;
  readonly store: QuotaStore;
  readonly clock: ManualClock;
  /** The store's own handle on a tenant, to look behind the plane. */
  readonly handle: (tenant: string) => TenantStore;
  readonly close: () => Promise<void>;
}

export async function memoryPlane(options: { leaseMs?: number } = {}): Promise<MemoryPlane> {
  const store = await openStore('sqlite::memory:');
  const clock = new ManualClock(T0);
  const plane = createPlane({ store, clock, ...options });
  return { plane, store, clock, handle: (tenant) => store.tenant(tenant), close: () => store.close() };
}

/** A temporary directory for a SQLite file, removed by the returned `remove`. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'quotaplane-plane-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Wraps a store so every handle call is recorded in `calls` (method names, in order) and can be
 * intercepted: `before[method]` runs before the real call. Used to prove what order the plane
 * asks the store in, and to slip another instance's act between two of its calls.
 */
export function observedStore(
  store: QuotaStore,
  before: Partial<Record<keyof TenantStore, () => Promise<void>>> = {},
): { store: QuotaStore; calls: string[] } {
  const calls: string[] = [];
  const wrap = (handle: TenantStore): TenantStore =>
    new Proxy(handle, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          calls.push(String(property));
          await before[property as keyof TenantStore]?.();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    store: { backend: store.backend, tenant: (tenant) => wrap(store.tenant(tenant)), tenants: () => store.tenants(), close: () => store.close() },
    calls,
  };
}

/** The `QuotaError` a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function failure(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(QuotaError);
  return error as QuotaError;
}

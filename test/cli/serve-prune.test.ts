import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { resolveServeConfig } from '../../src/cli/serve/serve-config.js';
import { startServer } from '../../src/cli/serve/start-server.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { startPruner } from '../../src/plane/pruner.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// `serve --prune-older-than` (off by default) prunes on an interval.

const T0 = Date.UTC(2026, 0, 5, 8);
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function storeWithOldRuns(): Promise<string> {
  const dir = temporaryDirectory();
  cleanups.push(() => dir.remove());
  const url = `sqlite:${join(dir.path, 'q.db')}`;
  const store = await openStore(url);
  const plane = createPlane({ store, clock: new ManualClock(T0) });
  for (const run of ['run-a', 'run-b']) {
    await plane.admit({ tenant: 'acme', run });
    await plane.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
  }
  await store.close();
  return url;
}

describe('serve --prune-older-than', () => {
  it('is off by default; the flag or QUOTAPLANE_PRUNE_OLDER_THAN takes an age with a unit, and a bare number is refused naming the variable', () => {
    expect(resolveServeConfig({}, {}).pruneOlderThanMs).toBeUndefined();
    expect(resolveServeConfig({}, { QUOTAPLANE_PRUNE_OLDER_THAN: '90d', QUOTAPLANE_PRUNE_INTERVAL_MS: '60000' })).toMatchObject({
      pruneOlderThanMs: 90 * 86_400_000,
      pruneIntervalMs: 60_000,
    });
    expect(resolveServeConfig({ pruneOlderThan: 3_600_000 }, { QUOTAPLANE_PRUNE_OLDER_THAN: '90d' }).pruneOlderThanMs).toBe(3_600_000);
    expect(() => resolveServeConfig({}, { QUOTAPLANE_PRUNE_OLDER_THAN: '90' })).toThrow(/QUOTAPLANE_PRUNE_OLDER_THAN: "90" is a bare number: a bare number has no unit/);
    expect(() => resolveServeConfig({}, { QUOTAPLANE_PRUNE_INTERVAL_MS: '0' })).toThrow(/QUOTAPLANE_PRUNE_INTERVAL_MS must be/);
  });

  it('none, the default shown in the table and the help, is taken from the flag and the variable and turns pruning off', async () => {
    expect(resolveServeConfig({}, { QUOTAPLANE_PRUNE_OLDER_THAN: 'none' }).pruneOlderThanMs).toBeUndefined();
    // The flag's none wins over the variable's age, as every flag wins.
    const parsed = await runCli(['serve', '--prune-older-than', 'none', '--prune-interval-ms', '60000']);
    expect(parsed.status).toBe(2);
    expect(parsed.stderr).not.toContain('must be');
    expect(parsed.stderr).toContain('--prune-older-than (QUOTAPLANE_PRUNE_OLDER_THAN) is not set (or is none)');
  });

  it('an age of zero or below is refused as not positive, not as a missing unit, from the flag and the variable', async () => {
    for (const age of ['0d', '-1d', '0.0001ms']) {
      expect(() => resolveServeConfig({}, { QUOTAPLANE_PRUNE_OLDER_THAN: age })).toThrow(/QUOTAPLANE_PRUNE_OLDER_THAN: .* an age must be positive/);
      const flag = await runCli(['serve', '--prune-older-than', age]);
      expect(flag.status).toBe(2);
      expect(flag.stderr).toContain('--prune-older-than');
      expect(flag.stderr).toContain('an age must be positive');
      expect(flag.stderr).not.toContain('bare number');
    }
  });

  it('a prune interval without a prune age is refused (exit 2) naming both settings, never silently ignored', () => {
    for (const [flags, env] of [
      [{ pruneIntervalMs: 60_000 }, {}],
      [{}, { QUOTAPLANE_PRUNE_INTERVAL_MS: '60000' }],
      [{ pruneIntervalMs: 60_000 }, { QUOTAPLANE_PRUNE_OLDER_THAN: 'none' }],
    ] as const) {
      expect(() => resolveServeConfig(flags, env)).toThrow(UsageError);
      expect(() => resolveServeConfig(flags, env)).toThrow(/--prune-interval-ms .*--prune-older-than/);
    }
    expect(resolveServeConfig({ pruneIntervalMs: 60_000 }, { QUOTAPLANE_PRUNE_OLDER_THAN: '90d' })).toMatchObject({ pruneIntervalMs: 60_000 });
  });

  it('a server started with it prunes at once, as quotaplane-serve, and the audit verifies', async () => {
    const storeUrl = await storeWithOldRuns();
    const server = await startServer({ storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0, pruneOlderThanMs: 30 * 86_400_000, logLevel: 'silent' });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await server.close();
    });
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const plane = createPlane({ store });
    let rows: readonly { by: { actor: string }; detail: Record<string, unknown> }[] = [];
    for (let attempt = 0; attempt < 100 && rows.length === 0; attempt += 1) {
      rows = (await plane.auditLog({ tenant: 'acme', action: 'run.prune' })).rows;
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ by: { actor: 'quotaplane-serve' }, detail: { runs: ['run-a', 'run-b'] } });
    await server.close();
    closed = true;
    expect(await plane.verifyAudit({})).toMatchObject({ ok: true });
  });

  it('startPruner refuses a missing age or a bad interval naming it; it prunes at once, and stop() cancels the next one', async () => {
    const storeUrl = await storeWithOldRuns();
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const plane = createPlane({ store });
    expect(() => startPruner(plane, { olderThanMs: 0 })).toThrow(/olderThanMs/);
    expect(() => startPruner(plane, { olderThanMs: 1000, intervalMs: 0 })).toThrow(/intervalMs/);
    const results: number[] = [];
    let pruned: () => void = () => {};
    const first = new Promise<void>((resolve) => {
      pruned = resolve;
    });
    const stop = startPruner(plane, {
      olderThanMs: 1000,
      intervalMs: 60_000,
      onPrune: (result) => {
        results.push(result.total.runs);
        pruned();
      },
    });
    await first;
    await stop();
    expect(results).toEqual([2]);
    expect((await plane.auditLog({ tenant: 'acme', action: 'run.prune' })).rows[0]?.by).toEqual({ actor: 'quotaplane-pruner', basis: 'asserted' });
  });
});

import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/testing/manual-clock.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// From the CLI: `--alert` on `quota set|update` and `quota plane set|update`, `alerts <tenant>`
// and `events` (docs/design/rules.md#e2, #e7, #e8), on a store.

// The CLI reads the current period by the system clock, so the runs are settled now.
const nowMs = () => Date.now();

let dir: { path: string; remove: () => void };
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  url = `sqlite:${join(dir.path, 'quota.db')}`;
  await (await openStore(url)).close();
});
afterEach(() => dir.remove());

async function json(args: readonly string[]): Promise<{ status: number; body: any; stderr: string }> {
  const { status, stdout, stderr } = await runCli([...args, '--json']);
  return { status, body: stdout === '' ? undefined : JSON.parse(stdout), stderr };
}

// Admits and settles one run of `tokens` tokens in acme through the library.
async function spend(tokens: number): Promise<void> {
  const store = await openStore(url);
  try {
    const plane = createPlane({ store, clock: new ManualClock(nowMs()) });
    const run = `run-${tokens}`;
    const admitted = await plane.admit({ tenant: 'acme', run, budget: { maxTokens: tokens, maxCallTokens: 0 } });
    if (!admitted.ok) throw new Error(JSON.stringify(admitted));
    await plane.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens, minorUnits: 0 }, concludes: true });
  } finally {
    await store.close();
  }
}

describe('alerts and events from the CLI', () => {
  it('E2 --alert sets thresholds (none, default), and a bad form is a usage error naming it', async () => {
    const set = await json(['quota', 'set', '--tenant', 'acme', '--max-tokens-per-period', '1000', '--alert', '90%', '--alert', 'tokens=300', '--new-tenant', '--store', url, '--actor', 'ops']);
    expect(set).toMatchObject({ status: 0, body: { quota: { maxTokensPerPeriod: 1000, alertThresholds: [{ percent: 90 }, { tokens: 300 }] } } });
    const none = await json(['quota', 'update', '--tenant', 'acme', '--alert', 'none', '--store', url, '--actor', 'ops']);
    expect(none.body.quota.alertThresholds).toEqual([]);
    const inherit = await json(['quota', 'update', '--tenant', 'acme', '--alert', 'default', '--store', url, '--actor', 'ops']);
    expect(inherit.body.quota).not.toHaveProperty('alertThresholds');
    const plane = await json(['quota', 'plane', 'update', '--alert', '50%', '--store', url, '--actor', 'ops']);
    expect(plane.body).toEqual({ ceiling: { alertThresholds: [{ percent: 50 }] } });
    const bad = await runCli(['quota', 'update', '--tenant', 'acme', '--alert', '80', '--store', url, '--actor', 'ops']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--alert "80" is not a threshold');
    const zero = await runCli(['quota', 'update', '--tenant', 'acme', '--alert', '0%', '--store', url, '--actor', 'ops']);
    expect(zero.stderr).toContain('--alert[0].percent');
    expect((await runCli(['quota', 'get', '--tenant', 'acme', '--store', url])).stdout).not.toContain('alert thresholds');
    await json(['quota', 'update', '--tenant', 'acme', '--alert', '80%', '--alert', 'minorUnits=5', '--store', url, '--actor', 'ops']);
    expect((await runCli(['quota', 'get', '--tenant', 'acme', '--store', url])).stdout).toMatch(/alert thresholds\s+80%, 5 minorUnits/);
  });

  it('E7 E8 alerts shows what applies and what is crossed; events lists the crossings once, by cursor', async () => {
    await json(['quota', 'set', '--tenant', 'acme', '--max-tokens-per-period', '1000', '--new-tenant', '--store', url, '--actor', 'ops']);
    await spend(850);
    const alerts = await json(['alerts', 'acme', '--store', url]);
    expect(alerts.body.ceilings).toEqual([
      {
        agent: null,
        unit: 'tokens',
        ceiling: 1000,
        settled: 850,
        source: 'default',
        thresholds: [
          { threshold: { percent: 80 }, label: '80%', amount: 800, crossed: true },
          { threshold: { percent: 100 }, label: '100%', amount: 1000, crossed: false },
        ],
      },
    ]);
    const text = await runCli(['alerts', 'acme', '--store', url]);
    expect(text.stdout).toMatch(/tenant\s+tokens\s+1000\s+850\s+80%\s+800\s+crossed\s+default/);
    expect(text.stdout).toMatch(/100%\s+1000\s+not yet/);

    const events = await json(['events', '--store', url]);
    expect(events.status).toBe(0);
    expect(events.body.events.map((event: { type: string }) => event.type)).toEqual(['threshold.crossed']);
    const next = events.body.next as number;
    await spend(150);
    const after = await json(['events', '--after', String(next), '--store', url]);
    expect(after.body.events.map((event: { type: string; data: { threshold?: unknown } }) => [event.type, event.data.threshold ?? null])).toEqual([
      ['threshold.crossed', { percent: 100 }],
      ['ceiling.reached', null],
    ]);
    const last = await json(['events', '--last', '1', '--store', url]);
    expect(last.body.events.map((event: { type: string }) => event.type)).toEqual(['ceiling.reached']);
    expect((await runCli(['events', '--last', '1', '--after', '0', '--store', url])).status).toBe(2);
    const page = await runCli(['events', '--limit', '1', '--store', url]);
    expect(page.status).toBe(5);
    expect(page.stdout).toMatch(/threshold\.crossed .*settled 850 tokens reached 80% \(800\) of ceiling 1000/);
    expect(page.stdout).toContain(`next: --after ${next} (more follow)`);
    expect((await runCli(['events', '--tenant', 'acmee', '--store', url])).stderr).toContain("'acme'");
  });
});

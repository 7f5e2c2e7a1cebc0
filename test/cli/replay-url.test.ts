import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { renderReplayTable } from '../../src/cli/replay/replay-report.js';
import type { ReplayReport } from '../../src/cli/replay/replay-types.js';
import { serviceFixture, type ServiceFixture } from '../http/http-fixtures.js';
import { HEADER, runCli, temporaryDirectory, writeTrace } from './cli-helpers.js';

// `quotaplane replay … --url --key` drives the replay through a running server
// and must find what the same replay finds on a store of its own, with every invariant true.

let dir: { path: string; remove: () => void };
let fixture: ServiceFixture;
let url: string;

beforeEach(async () => {
  dir = temporaryDirectory();
  fixture = await serviceFixture();
  await fixture.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(fixture.app.server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await fixture.close();
  dir.remove();
});

/** 240 rows, ten a second, with contexts and outputs that vary so that slots and the daily ceiling both refuse some. */
function busyTrace(): string {
  const rows = Array.from({ length: 240 }, (_, index) => {
    const at = new Date(Date.UTC(2023, 10, 16, 18, 0, 0) + index * 100).toISOString().replace('T', ' ').replace('Z', '0000');
    return `${at},${50 + ((index * 37) % 400)},${(index * 13) % 60}`;
  });
  return writeTrace(dir.path, 'busy.csv', [HEADER, ...rows]);
}

const FLAGS = ['--tenants', '4', '--max-concurrent', '2', '--tokens-per-period', '40000', '--period', 'daily', '--json'];

function withoutPrefix(report: ReplayReport) {
  const prefix = report.options.tenantPrefix;
  return {
    totals: report.totals,
    tenants: report.tenants.map((tenant) => ({ ...tenant, tenant: tenant.tenant.slice(prefix.length) })),
    invariants: report.invariants,
    ok: report.ok,
  };
}

describe('quotaplane replay --url', () => {
  it('through a server with an all-tenant operator key finds exactly what a replay on its own store finds, every invariant true', async () => {
    const trace = busyTrace();
    const local = await runCli(['replay', trace, ...FLAGS]);
    expect(local.status).toBe(0);
    const remote = await runCli(['replay', trace, ...FLAGS, '--url', url, '--key', fixture.key.opAll.secret]);
    expect(remote.stderr).toBe('');
    expect(remote.status).toBe(0);
    const remoteReport = JSON.parse(remote.stdout) as ReplayReport;
    const localReport = JSON.parse(local.stdout) as ReplayReport;
    expect(remoteReport.store).toEqual({ url, temporary: false, kept: true });
    expect(remoteReport.options.tenantPrefix).toMatch(/^replay-[0-9A-Z]{26}-$/);
    expect(localReport.totals.refused.TooManyRuns + localReport.totals.refused.SpentOut).toBeGreaterThan(0);
    expect(withoutPrefix(remoteReport)).toEqual(withoutPrefix(localReport));

    // The server's store holds what the replay measured: settled spend, no slot, no hold.
    const tenant = remoteReport.tenants[0]?.tenant as string;
    const usage = await fixture.plane.usage({ tenant, period: '2023-11-16' });
    expect(usage.spent).toEqual(remoteReport.tenants[0]?.settled);
    expect(usage.running).toBe(0);
    expect(usage.reserved).toEqual({ tokens: 0, minorUnits: 0 });
  }, 60_000);

  it('refuses a runner key: the replay cannot set quotas or act for many tenants, and the run fails', async () => {
    const remote = await runCli(['replay', busyTrace(), ...FLAGS, '--url', url, '--key', fixture.key.runAcme.secret]);
    expect(remote.status).not.toBe(0);
    expect(remote.stderr).toMatch(/not ?found|nothing here/i);
  });

  it('--url without --key, --url with --store, and --key without --url are usage errors', async () => {
    const trace = busyTrace();
    expect((await runCli(['replay', trace, '--url', url])).status).toBe(2);
    expect((await runCli(['replay', trace, '--url', url, '--key', 'qp_x', '--store', 'sqlite::memory:'])).status).toBe(2);
    expect((await runCli(['replay', trace, '--key', 'qp_x'])).status).toBe(2);
    const badUrl = await runCli(['replay', trace, '--url', 'localhost:7070', '--key', 'qp_x']);
    expect(badUrl.status).toBe(2);
    expect(badUrl.stderr).toContain('--url');
  });

  it('when a slot was freed early, the report says a sweeper is the likely cause and every server on the store needs it off', async () => {
    const remote = await runCli(['replay', busyTrace(), ...FLAGS, '--url', url, '--key', fixture.key.opAll.secret]);
    const report = JSON.parse(remote.stdout) as ReplayReport;
    expect(renderReplayTable(report)).not.toContain('sweeper');
    const swept = renderReplayTable({ ...report, ok: false, invariants: { ...report.invariants, slotsHeldWhileRunning: false } });
    expect(swept).toMatch(/slotsHeldWhileRunning is false: .*sweeper.*Every server on this store must run with --sweep-interval-ms 0/);
  });
});

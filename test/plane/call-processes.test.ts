import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { compiledEntry } from '../compiled-entry.js';
import { BACKENDS, type SharedStore } from './backends.js';
import type { CallRaceJob } from './call-race-worker.js';

const WORKER = fileURLToPath(new URL('./call-race-worker.ts', import.meta.url));
const PROCESSES = 4;
const ADMITTED_PER_PROCESS = 8;
const TENANT = 'acme';
const LIMIT = 1000;
const WINDOW_MS = 1000;

// "Four processes never admit more than N in any window" (docs/design/rules.md#m2, #m3): four OS
// processes, each with its own connection, make 200-token calls against one ceiling of 1000 tokens
// per second, each booking exactly its worst case. If two processes' reservations ever passed the
// ceiling together, some one-second window would book more than 1000; the store's own usage rows
// are read back and every window is checked.

function reply(child: ChildProcess): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`caller exited with ${code}`));
    child.once('exit', onExit);
    child.once('message', (received) => {
      child.removeListener('exit', onExit);
      const body = received as Record<string, unknown>;
      if (typeof body.error === 'string') reject(new Error(`caller failed: ${body.error}`));
      else resolve(body);
    });
  });
}

// The tenant meter's usage rows, as stored: each row's running total at its recorded instant.
async function usageRows(shared: SharedStore): Promise<{ atMs: number; tokens: number }[]> {
  const sql = "SELECT at_ms, tokens FROM %squota_call_usage WHERE tenant = 'acme' AND subject = 'tenant' ORDER BY at_ms";
  if (shared.url.startsWith('sqlite:')) {
    const db = new Database(shared.url.slice('sqlite:'.length), { readonly: true });
    try {
      return (db.prepare(sql.replace('%s', '')).all() as { at_ms: number; tokens: number }[]).map((row) => ({ atMs: row.at_ms, tokens: row.tokens }));
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: shared.url });
  await client.connect();
  try {
    const schema = (shared.options as { schema: string }).schema;
    const rows = await client.query<{ at_ms: string; tokens: string }>(sql.replace('%s', `${client.escapeIdentifier(schema)}.`));
    return rows.rows.map((row) => ({ atMs: Number(row.at_ms), tokens: Number(row.tokens) }));
  } finally {
    await client.end();
  }
}

describe.each(BACKENDS)('model calls across $name processes', ({ fresh }) => {
  it('M3: four processes never book more than the ceiling in any window, and every booked call is counted once', { timeout: 120_000 }, async () => {
    const shared = await fresh('call-race');
    const store = await openStore(shared.url, shared.options);
    try {
      const plane = createPlane({ store });
      await plane.setCallCeilings(TENANT, { tenant: [{ unit: 'tokens', limit: LIMIT, windowSeconds: WINDOW_MS / 1000 }] }, { newTenant: true });
      const children = await Promise.all(
        Array.from({ length: PROCESSES }, async (_, p) => {
          const job: CallRaceJob = { url: shared.url, options: shared.options, tenant: TENANT, process: p, admitted: ADMITTED_PER_PROCESS };
          return fork(await compiledEntry(WORKER), [JSON.stringify(job)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        }),
      );
      const reports = await Promise.all(children.map((child) => reply(child)));
      const refused = reports.reduce((sum, report) => sum + Number(report.refused), 0);
      const released = reports.reduce((sum, report) => sum + Number(report.released), 0);
      expect(refused, 'the ceiling was contended, so the race could have gone wrong').toBeGreaterThan(0);

      const rows = await usageRows(shared);
      // Each row's own booking is its running total less the row before's.
      const bookings = rows.map((row, i) => ({ atMs: row.atMs, tokens: row.tokens - (i === 0 ? 0 : rows[i - 1]!.tokens) }));
      for (const { atMs } of bookings) {
        const inWindow = bookings.filter((booking) => booking.atMs > atMs - WINDOW_MS && booking.atMs <= atMs).reduce((sum, booking) => sum + booking.tokens, 0);
        expect(inWindow, `the window ending at ${atMs}`).toBeLessThanOrEqual(LIMIT);
      }
      const booked = PROCESSES * ADMITTED_PER_PROCESS - released;
      expect(rows.at(-1)?.tokens).toBe(booked * 200);
      const [tenant] = await plane.callStandings({ tenant: TENANT });
      expect(tenant?.held).toEqual({ tokens: 0, requests: 0, minorUnits: 0 });
      expect(tenant?.booked.requests).toBe(booked);
    } finally {
      await store.close();
      await shared.remove();
    }
  });
});

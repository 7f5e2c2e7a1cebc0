import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { mintApiKey } from '../../src/http/api-key-secret.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'dist', 'cli', 'bin.js');
const WEB = join(ROOT, 'dist', 'web', 'index.html');

/** The keys the dashboard tests sign in with (their secrets). */
export interface DashboardKeys {
  /** Operator of every tenant, named `ops-alice`. */
  readonly operator: string;
  /** Operator of globex only, named `ops-globex`. */
  readonly globexOperator: string;
  /** Runner of acme, named `acme-workers`. */
  readonly runner: string;
}

/** A real `quotaplane serve` (the built bin) on a SQLite file in a fresh temporary directory. */
export interface DashboardServer {
  readonly url: string;
  readonly keys: DashboardKeys;
  stop(): Promise<void>;
}

const DIGEST = 'ab'.repeat(32);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The grant acme's quota puts rate ceilings on. */
export const REFUND_GRANT = 'tool://payments/refund';

/** The agent of wonka with a token ceiling and an alert threshold of its own. */
export const WONKA_AGENT = 'scribe';

/** The hostile agent name a seeded run carries: it must show as text. */
export const HOSTILE_AGENT = '<script>alert(2)</script>';

/**
 * Seeds a store with tenants an operator would see at three in the morning, then starts the built
 * `quotaplane serve` on it (port 0, no sweeper) and resolves once it prints where it serves.
 * - acme: 2 of 2 concurrent runs (at its ceiling), a stranded run whose hold stays, spend in recent months;
 * - globex: a daily quota three quarters spent;
 * - initech: no ceilings, some spend;
 * - umbrella: a standing tenant halt;
 * - hooli: two stranded runs whose holds take it to at least 80 % of its money ceiling (a warning);
 * - wonka: alert thresholds of its own (50 % and 90 %, money past 50 %) and an agent, scribe, with a
 *   token ceiling and a threshold of its own (5,000 tokens, crossed by a pass that overran its hold).
 */
export async function startDashboardServer(): Promise<DashboardServer> {
  if (!existsSync(BIN) || !existsSync(WEB)) {
    throw new Error(`the browser tests run the built package: run 'npm run build' first (missing ${existsSync(BIN) ? WEB : BIN})`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'quotaplane-dashboard-'));
  const storeUrl = `sqlite:${join(dir, 'quotaplane.db')}`;
  const nowMs = Date.now();

  const store = await openStore(storeUrl);
  let keys: DashboardKeys;
  try {
    const apiKeys = store.apiKeys?.();
    if (apiKeys === undefined) throw new Error('the SQLite store has no apiKeys()');
    const make = async (role: 'operator' | 'runner', tenant: string, name: string) => {
      const minted = mintApiKey({ role, tenant, name, atMs: nowMs });
      await apiKeys.create(minted.key);
      return minted.secret;
    };
    keys = {
      operator: await make('operator', '*', 'ops-alice'),
      globexOperator: await make('operator', 'globex', 'ops-globex'),
      runner: await make('runner', 'acme', 'acme-workers'),
    };
    await seed(createPlane({ store }), nowMs);
  } finally {
    await store.close();
  }

  const child = spawn(process.execPath, [BIN, 'serve', '--store', storeUrl, '--port', '0', '--sweep-interval-ms', '0', '--log-level', 'warn'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await serving(child);
  return {
    url,
    keys,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function seed(plane: Plane, nowMs: number): Promise<void> {
  const budget = { maxTokens: 40_000, maxCallTokens: 4_000, maxMinorUnits: 400_000, maxCallMinorUnits: 40_000 };
  const admitted = async (input: Parameters<Plane['admit']>[0]) => {
    const pass = await plane.admit(input);
    if (!pass.ok) throw new Error(`seed admission of ${input.run} refused: ${pass.message}`);
  };

  await plane.setQuota('acme', {
    period: 'monthly',
    maxConcurrentRuns: 2,
    maxTokensPerPeriod: 1_000_000,
    maxMinorUnitsPerPeriod: 25_000_000,
    rateCeilings: { [REFUND_GRANT]: [{ count: 5, windowSeconds: 600 }, { count: 100, windowSeconds: 86_400 }] },
  }, { newTenant: true });
  // Spend settled in each of the last five months, so the chart has history.
  for (let back = 5; back >= 1; back -= 1) {
    const atMs = monthsBefore(nowMs, back);
    await admitted({ tenant: 'acme', run: `run-history-${back}`, budget, atMs, leaseMs: HOUR_MS });
    await plane.settle({ tenant: 'acme', run: `run-history-${back}`, epoch: 1, spend: { tokens: 8_000 * (6 - back), minorUnits: 90_000 * (6 - back) }, concludes: true, atMs: atMs + 60_000 });
  }
  // A run whose process died: its lease lapsed, the sweep stranded it, its hold stays.
  await admitted({ tenant: 'acme', run: 'run-stranded', budget, chain: ['dana@acme.example'], atMs: nowMs - 20 * 60_000, leaseMs: 60_000 });
  await plane.sweep({ tenant: 'acme', atMs: nowMs - 60_000 });
  // Two runs at work: the tenant is at its concurrency ceiling.
  await admitted({ tenant: 'acme', run: 'run-support-1', budget, agent: { name: 'support-bot', digest: DIGEST }, leaseMs: DAY_MS });
  await admitted({ tenant: 'acme', run: 'run-hostile', budget, agent: { name: HOSTILE_AGENT, digest: DIGEST }, leaseMs: DAY_MS });
  // Three refunds in the last few minutes: 3 of 5 in the ten-minute window.
  for (const dispatch of ['refund-1', 'refund-2', 'refund-3']) {
    const counted = await plane.dispatch({ tenant: 'acme', run: 'run-support-1', grant: REFUND_GRANT, dispatch, ceilings: [], atMs: nowMs - 120_000 });
    if (!counted.ok) throw new Error(`seed dispatch ${dispatch} refused: ${counted.message}`);
  }

  // Model-call ceilings: one call booked 30,000 tokens a few seconds ago, one is in flight.
  await plane.setCallCeilings('acme', {
    tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }],
    models: { 'gpt-4.1': [{ unit: 'requests', limit: 10, windowSeconds: 60 }] },
    endUsers: { default: [{ unit: 'tokens', limit: 50_000, windowSeconds: 3600 }] },
  });
  const booked = await plane.reserveCall({ tenant: 'acme', model: 'gpt-4.1', endUser: 'u-7', callId: 'call-seed-1', inputTokens: 20_000, maxOutputTokens: 12_000, atMs: nowMs - 10_000 });
  if (!booked.ok) throw new Error('seed model call refused');
  await plane.adjustCall({ tenant: 'acme', callId: 'call-seed-1', usage: { inputTokens: 20_000, outputTokens: 10_000 }, atMs: nowMs - 9_000 });
  const inFlight = await plane.reserveCall({ tenant: 'acme', model: 'gpt-4.1', endUser: 'u-7', callId: 'call-seed-2', inputTokens: 4_000, maxOutputTokens: 4_000, atMs: nowMs - 5_000 });
  if (!inFlight.ok) throw new Error('seed model call refused');

  await plane.setQuota('globex', { period: 'daily', maxTokensPerPeriod: 200_000, maxMinorUnitsPerPeriod: 2_000_000 }, { newTenant: true });
  for (let i = 0; i < 3; i += 1) {
    await admitted({ tenant: 'globex', run: `run-g-${i}`, budget: { ...budget, maxTokens: 60_000 } });
    await plane.settle({ tenant: 'globex', run: `run-g-${i}`, epoch: 1, spend: { tokens: 50_000, minorUnits: 380_000 }, concludes: true });
  }

  await admitted({ tenant: 'initech', run: 'run-i-1' });
  await plane.settle({ tenant: 'initech', run: 'run-i-1', epoch: 1, spend: { tokens: 3_200, minorUnits: 41_000 }, concludes: true });

  // Two runs whose process died, both stranded with their holds: a warning on money, a bulk release.
  await plane.setQuota('hooli', { period: 'monthly', maxTokensPerPeriod: 100_000, maxMinorUnitsPerPeriod: 1_000_000 }, { newTenant: true });
  for (const run of ['run-h-1', 'run-h-2']) await admitted({ tenant: 'hooli', run, budget, atMs: nowMs - 20 * 60_000, leaseMs: 60_000 });
  await plane.sweep({ tenant: 'hooli', atMs: nowMs - 60_000 });

  await plane.setQuota('wonka', {
    period: 'monthly',
    maxTokensPerPeriod: 100_000,
    maxMinorUnitsPerPeriod: 1_000_000,
    alertThresholds: [{ percent: 50 }, { percent: 90 }],
    agents: { [WONKA_AGENT]: { maxTokensPerPeriod: 10_000, alertThresholds: [{ tokens: 5_000 }] } },
  }, { newTenant: true });
  await admitted({ tenant: 'wonka', run: 'run-w-1', budget: { maxTokens: 4_000, maxCallTokens: 400, maxMinorUnits: 400_000, maxCallMinorUnits: 40_000 }, agent: { name: WONKA_AGENT, digest: DIGEST } });
  await plane.settle({ tenant: 'wonka', run: 'run-w-1', epoch: 1, spend: { tokens: 6_000, minorUnits: 300_000 }, concludes: true });
  await admitted({ tenant: 'wonka', run: 'run-w-2', budget });
  await plane.settle({ tenant: 'wonka', run: 'run-w-2', epoch: 1, spend: { tokens: 40_000, minorUnits: 400_000 }, concludes: true });

  await plane.setQuota('umbrella', { period: 'monthly', maxConcurrentRuns: 10 }, { newTenant: true });
  await plane.halt({ tenant: 'umbrella', scope: 'tenant', reason: 'billing dispute: stop new work until finance clears it', by: { actor: 'ops-bob', basis: 'asserted' } });
}

// The same instant `back` calendar months earlier (on day 10, so every month has it).
function monthsBefore(nowMs: number, back: number): number {
  const date = new Date(nowMs);
  date.setUTCDate(10);
  date.setUTCMonth(date.getUTCMonth() - back);
  return date.getTime();
}

function serving(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`quotaplane serve did not start within 20 s:\n${output}`)), 20_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /quotaplane: serving (http:\/\/\S+) on store/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    // serve writes its notices for a person to stderr; stdout carries only JSON log lines.
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => fail(new Error(`quotaplane serve exited ${String(code)} before serving:\n${output}`)));
  });
}

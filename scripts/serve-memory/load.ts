// The load the memory run puts on `serve`: many clients at once, each a loop of admission cycles
// (admit, then settle with `concludes`) through `quotaplane/client`, over several tenants, some of
// which refuse: one whose concurrency ceiling is far below its clients (TooManyRuns, some after
// waiting in its queue) and one under a halt (Halted). Optionally some clients admit each run in a tenant never seen before, to show
// whether anything kept per tenant grows with the number of tenants. A scraper reads /metrics as
// Prometheus would.
import { setTimeout as sleep } from 'node:timers/promises';

import { createClient, type QuotaplaneClient } from '../../src/client/index.js';

/** The tenants the load spreads its clients over, the tenant that refuses for concurrency, and the halted one. */
export const OPEN_TENANTS = Array.from({ length: 8 }, (_, index) => `mem-${index}`);
export const TIGHT_TENANT = 'mem-tight';
export const HALTED_TENANT = 'mem-halted';

/** What the load has done so far. */
export interface LoadCounts {
  cycles: number;
  refusals: Record<string, number>;
  faults: Record<string, number>;
  scrapes: number;
}

/** Options of {@link prepareLoad}. */
export interface LoadOptions {
  readonly url: string;
  /** The all-tenant operator key `serve` made (for setup, the fresh tenants and /metrics). */
  readonly operatorKey: string;
  /** How many clients run at once. */
  readonly clients: number;
  /** How many of them admit each run in a new tenant (operator key); the rest use runner keys. */
  readonly freshTenantClients: number;
  /** How often /metrics is read, ms; 0 for never. */
  readonly scrapeEveryMs: number;
}

/** A running load: its counts so far, and how to stop it (resolves once every client has stopped). */
export interface Load {
  readonly counts: LoadCounts;
  stop(): Promise<void>;
}

/** The tenants set up and their keys made: start the clients as often as needed. */
export interface PreparedLoad {
  start(): Load;
}

const BY = { actor: 'serve-memory', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 2_000, maxCallTokens: 500 } as const;
const WAIT_MS = 250;

/**
 * Sets the quotas and the halt and makes one runner key per tenant; each `start` then runs the clients. Client
 * `i` (of those not on fresh tenants) acts for: the halted tenant when `i % 40 === 39`, the tight
 * tenant when `i % 40 >= 36` (every other one of those waiting up to 250 ms for a slot), else an
 * open tenant, round robin. A refused client pauses 20 ms before its next admission, as a caller
 * honouring back-pressure would (briefly).
 */
export async function prepareLoad(options: LoadOptions): Promise<PreparedLoad> {
  const operator = createClient({ url: options.url, key: options.operatorKey });
  for (const tenant of OPEN_TENANTS) {
    await operator.setQuota(tenant, { period: 'daily', maxConcurrentRuns: 1_000, maxTokensPerPeriod: 1_000_000_000_000 });
  }
  await operator.setQuota(TIGHT_TENANT, { period: 'daily', maxConcurrentRuns: 2, maxTokensPerPeriod: 1_000_000_000_000 });
  await operator.setQuota(HALTED_TENANT, { period: 'daily', maxConcurrentRuns: 1_000 });
  const standing = await operator.halts(HALTED_TENANT);
  if (standing.length === 0) await operator.halt({ tenant: HALTED_TENANT, scope: { kind: 'tenant' }, reason: 'memory run: every admission is refused', by: BY });
  const runners = new Map<string, QuotaplaneClient>();
  for (const tenant of [...OPEN_TENANTS, TIGHT_TENANT, HALTED_TENANT]) {
    const created = await operator.keys.create({ tenant, role: 'runner', name: `serve-memory-${tenant}` });
    runners.set(tenant, createClient({ url: options.url, key: created.key }));
  }

  const tenantOf = (client: number): string => {
    const slot = client % 40;
    if (slot === 39) return HALTED_TENANT;
    if (slot >= 36) return TIGHT_TENANT;
    return OPEN_TENANTS[client % OPEN_TENANTS.length] as string;
  };
  let freshCount = 0;
  return { start: () => runClients(options, operator, (tenant) => runners.get(tenant) as QuotaplaneClient, tenantOf, () => `mem-fresh-${(freshCount += 1)}`) };
}

function runClients(
  options: LoadOptions,
  operator: QuotaplaneClient,
  runnerOf: (tenant: string) => QuotaplaneClient,
  tenantOf: (client: number) => string,
  freshTenant: () => string,
): Load {
  const counts: LoadCounts = { cycles: 0, refusals: {}, faults: {}, scrapes: 0 };
  let stopped = false;
  const tally = (bucket: Record<string, number>, code: string) => {
    bucket[code] = (bucket[code] ?? 0) + 1;
  };
  const cycle = async (plane: QuotaplaneClient, tenant: string, waitMs: number): Promise<void> => {
    const pass = await plane.admit({ tenant, budget: BUDGET, ...(waitMs > 0 ? { waitMs } : {}) });
    if (!pass.ok) {
      tally(counts.refusals, pass.refusal.code);
      await sleep(20);
      return;
    }
    await plane.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: { tokens: 400, minorUnits: 0 }, concludes: true });
    counts.cycles += 1;
  };
  const loop = async (client: number): Promise<void> => {
    const fresh = client < options.freshTenantClients;
    while (!stopped) {
      const tenant = fresh ? freshTenant() : tenantOf(client);
      try {
        // Half the clients of the tight tenant wait for a slot (a long poll) before being refused.
        await cycle(fresh ? operator : runnerOf(tenant), tenant, tenant === TIGHT_TENANT && client % 2 === 0 ? WAIT_MS : 0);
      } catch (error) {
        tally(counts.faults, typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : String(error));
        await sleep(100);
      }
    }
  };
  const scrape = async (): Promise<void> => {
    while (!stopped && options.scrapeEveryMs > 0) {
      const response = await fetch(`${options.url}/metrics`, { headers: { authorization: `Bearer ${options.operatorKey}` } });
      await response.text();
      counts.scrapes += 1;
      await sleep(options.scrapeEveryMs);
    }
  };
  const running = [...Array.from({ length: options.clients }, (_, client) => loop(client)), scrape()];
  return {
    counts,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

import { performance } from 'node:perf_hooks';

import { addSpend, ZERO_SPEND, type Spend } from '../../core/spend.js';
import type { Plane } from '../../plane/plane.js';
import type { PendingCompletion } from './completion-queue.js';
import { measureInvariants, type TenantLedger } from './replay-invariants.js';
import type { RefusalCounts, ReplayOptions, ReplayReport, TenantReport, WaitFigures } from './replay-types.js';

/** Where the replay ran (replay-run.ts `ReplayTarget`), as the report shows it. */
export interface ReportedTarget {
  readonly url: string;
  readonly temporary: boolean;
  readonly kept: boolean;
  readonly tenantPrefix: string;
}

/** Only under `--wait`: the wait allowed, and the wait figures per tenant and of every tenant. */
export interface ReportedWaits {
  readonly waitMs: number;
  readonly ofTenant: (tenant: string) => WaitFigures;
  readonly total: WaitFigures;
}

/**
 * Measures the invariants from the store (never from the replay's own counters) and builds the
 * report of a finished replay, sequential or waiting: per tenant, totals, timing (`wallMs` is the
 * time the rows took) and whether every invariant holds.
 */
export async function replayReport(input: {
  readonly plane: Pick<Plane, 'settle' | 'usage'>;
  readonly options: ReplayOptions;
  readonly target: ReportedTarget;
  readonly ledgers: readonly TenantLedger[];
  readonly settledRuns: readonly PendingCompletion[];
  readonly rowCount: number;
  readonly wallMs: number;
  readonly waits?: ReportedWaits;
}): Promise<ReplayReport> {
  const { options, target, rowCount, wallMs, waits } = input;
  const verifyStarted = performance.now();
  const measured = await measureInvariants(input.plane, input.ledgers, input.settledRuns);
  const verifyMs = performance.now() - verifyStarted;

  const tenants: TenantReport[] = input.ledgers.map((book) => ({
    tenant: book.tenant,
    admitted: book.admitted,
    refused: { ...book.refused },
    settled: measured.settledByTenant.get(book.tenant) ?? ZERO_SPEND,
    peakRunning: book.peakRunning,
    ...(waits === undefined ? {} : { wait: waits.ofTenant(book.tenant) }),
  }));
  const invariants = measured.invariants;
  return {
    trace: options.tracePath,
    store: { url: target.url, temporary: target.temporary, kept: target.kept },
    options: {
      tenants: options.tenants,
      seed: options.seed,
      zipfExponent: options.zipfExponent,
      maxConcurrent: options.maxConcurrent ?? null,
      tokensPerPeriod: options.tokensPerPeriod ?? null,
      minorUnitsPerPeriod: options.minorUnitsPerPeriod ?? null,
      period: options.period,
      priceIn: options.priceIn,
      priceOut: options.priceOut,
      maxOutputTokens: options.maxOutputTokens,
      tenantPrefix: target.tenantPrefix,
      ...(waits === undefined ? {} : { waitMs: waits.waitMs }),
      ...(options.planeMaxConcurrent === undefined ? {} : { planeMaxConcurrent: options.planeMaxConcurrent }),
    },
    tenants,
    totals: {
      rows: rowCount,
      admitted: tenants.reduce((sum, t) => sum + t.admitted, 0),
      refused: sumRefusals(tenants.map((t) => t.refused)),
      settled: tenants.reduce((sum: Spend, t) => addSpend(sum, t.settled), ZERO_SPEND),
      ...(waits === undefined ? {} : { wait: waits.total }),
    },
    timing: {
      wallMs: Math.round(wallMs),
      requestsPerSecond: wallMs > 0 ? Math.round((rowCount / wallMs) * 1000) : 0,
      verifyMs: Math.round(verifyMs),
    },
    invariants,
    ok: Object.values(invariants).every(Boolean),
  };
}

/** The refusal counts of every tenant added up. */
export function sumRefusals(counts: readonly RefusalCounts[]): RefusalCounts {
  const total: RefusalCounts = { TooManyRuns: 0, SpentOut: 0, Unbounded: 0, Halted: 0 };
  for (const count of counts) {
    for (const code of Object.keys(total) as (keyof RefusalCounts)[]) total[code] += count[code];
  }
  return total;
}

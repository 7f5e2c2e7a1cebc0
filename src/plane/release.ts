import { normaliseRunId, requireTenant } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import type { ReleaseRunOutcome } from '../store/types.js';
import { MAX_LIST_LIMIT, type ReleaseInput, type RunsInput, type RunsPage } from './operator-types.js';
import type { RunStatus } from '../store/types.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { requireRunStatus } from '../store/operator-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { requireExistingTenant } from './known-tenant.js';

/**
 * `Plane.release`: an operator gives back a run's slot and hold and closes it
 * (docs/design/rules.md#l60). The store does it and appends the `run.release` audit row in one
 * transaction, recording what was held, so the log can say what the release gave back. A tenant
 * that does not exist is refused `NOT_FOUND` first, naming the nearest known tenant
 * (docs/design/rules.md#l95).
 */
export async function release(context: PlaneContext, input: ReleaseInput): Promise<ReleaseRunOutcome> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  const ifStatus = request.ifStatus === undefined ? undefined : requireRunStatus('ifStatus', request.ifStatus);
  await requireExistingTenant(context.store, tenant, 'release', false);
  return storeCall('releaseRun', () => tenantHandle(context.store, tenant).releaseRun({ run, atMs, by, ...(ifStatus === undefined ? {} : { ifStatus }) }));
}

/** The two verbs a bulk release needs: the run listing and the single release (a plane, or the CLI's target). */
export interface StrandedReleaseVerbs {
  runs(input: RunsInput): Promise<RunsPage>;
  release(input: { tenant: string; run: string; ifStatus?: RunStatus }): Promise<ReleaseRunOutcome>;
}

/** What happened to one run of a bulk release. */
export type StrandedReleaseResult =
  | { readonly run: string; readonly result: 'released' | 'already-closed'; readonly outcome: ReleaseRunOutcome }
  | { readonly run: string; readonly result: 'skipped'; readonly reason: string }
  | { readonly run: string; readonly result: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/** The answer of {@link releaseStranded}: one result per run, in run-id order, and the counts. */
export interface StrandedReleaseReport {
  readonly tenant: string;
  readonly released: number;
  readonly failed: number;
  readonly skipped: number;
  readonly results: readonly StrandedReleaseResult[];
  /** More stranded runs stood beyond `max`; they were left alone. */
  readonly truncated: boolean;
}

/** Most runs one bulk release lists and releases; the rest wait for the next one. */
export const MAX_STRANDED_RELEASE = 1000;

/**
 * The stranded runs of a tenant, in run-id order, at most `max` (paged through the run registry),
 * and whether more stood beyond them.
 */
export async function strandedRuns(verbs: Pick<StrandedReleaseVerbs, 'runs'>, tenant: string, max = MAX_STRANDED_RELEASE): Promise<{ runs: string[]; truncated: boolean }> {
  const runs: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await verbs.runs({ tenant, statuses: ['stranded'], after, limit: Math.min(MAX_LIST_LIMIT, max - runs.length + 1) });
    for (const row of page.runs) runs.push(row.run);
    if (runs.length > max) return { runs: runs.slice(0, max), truncated: true };
    if (page.next === null) return { runs, truncated: false };
    after = page.next;
  }
}

/**
 * Releases every stranded run of `tenant`, one plane release each, so each is audited as
 * `run.release` exactly as a single release is (docs/design/rules.md#l60). `only`, when given,
 * limits it to those runs (the ones an operator confirmed); one of them no longer stranded is
 * skipped, never released. A release that fails is reported with its fault and the others go on;
 * a run is counted released only when its release answered `released`. `onProgress` hears each
 * result as it comes. Each release asks the store to release the run only if it is still stranded
 * in its own transaction (`ifStatus`), so a run resumed after the listing is skipped, not released.
 */
export async function releaseStranded(
  verbs: StrandedReleaseVerbs,
  tenant: string,
  options: { only?: readonly string[] | undefined; onProgress?: ((done: number, of: number, result: StrandedReleaseResult) => void) | undefined } = {},
): Promise<StrandedReleaseReport> {
  const listed = await strandedRuns(verbs, tenant);
  const stranded = new Set(listed.runs);
  const targets = options.only === undefined ? listed.runs : [...new Set(options.only)].sort();
  const results: StrandedReleaseResult[] = [];
  for (const run of targets) {
    let result: StrandedReleaseResult;
    if (!stranded.has(run)) {
      result = { run, result: 'skipped', reason: 'not stranded when listed (resumed, settled or released since, or no such run)' };
    } else {
      try {
        // Released only if still stranded in the release's own transaction: a run resumed since it
        // was listed answers CONFLICT, and is skipped with nothing written.
        const outcome = await verbs.release({ tenant, run, ifStatus: 'stranded' });
        result = { run, result: outcome.outcome, outcome };
      } catch (error) {
        const fault = faultOf(error);
        result = fault.code === 'CONFLICT' ? { run, result: 'skipped', reason: fault.message } : { run, result: 'failed', error: fault };
      }
    }
    results.push(result);
    options.onProgress?.(results.length, targets.length, result);
  }
  return {
    tenant,
    released: results.filter((entry) => entry.result === 'released').length,
    failed: results.filter((entry) => entry.result === 'failed').length,
    skipped: results.filter((entry) => entry.result === 'skipped' || entry.result === 'already-closed').length,
    truncated: options.only === undefined && listed.truncated,
    results,
  };
}

function faultOf(error: unknown): { code: string; message: string } {
  const code = typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'INTERNAL';
  return { code, message: error instanceof Error ? error.message : String(error) };
}

import { distance } from 'fastest-levenshtein';

import { QuotaError } from './errors.js';

/*
 * Which tenants exist (docs/design/rules.md#l95). Admission names its tenant and starts its
 * history, so a tenant comes into being by being used; an operator's write that names a tenant
 * nobody ever used is far more often a typo (`acmee` for `acme`) than a new customer, and would
 * otherwise stand for ever: a halt that stops nothing real, listed by status, the dashboard and
 * /metrics with no way to remove it. Such a write is refused unless its caller says the tenant is
 * new.
 */

/**
 * The kinds of record that make a tenant known, each a table both store adapters keep:
 * - `quota`: a stored quota;
 * - `run`: a registered run, of any status;
 * - `slot`: a run holding one of its slots;
 * - `waiter`: an admission waiting for a slot;
 * - `spend`: a billing period's settled or held figures;
 * - `halt`: a standing halt;
 * - `audit`: its audit chain (a lifted halt, a prune, a key created or revoked…), unless the
 *   chain's newest row is the tenant's deletion (`tenant.delete`, rules.md#l95-6): a deleted
 *   tenant keeps its chain but exists again only once something of it is written;
 * - `key`: an API key of that one tenant, revoked or not (not a key of every tenant, `*`);
 * - `call`: a model-call meter (every reserved model call has one, its `user:<id>` meters among
 *   them: end users' ids) or configured model-call ceilings (rules.md#m1).
 */
export const TENANT_RECORDS = Object.freeze(['quota', 'run', 'slot', 'waiter', 'spend', 'halt', 'audit', 'key', 'call'] as const);

/** One kind of record of {@link TENANT_RECORDS}. */
export type TenantRecord = (typeof TENANT_RECORDS)[number];

/** For each kind of record of {@link TENANT_RECORDS}, whether the store holds at least one of the tenant's. */
export type TenantRecords = Readonly<Record<TenantRecord, boolean>>;

/**
 * The rule (rules.md#l95): a tenant is known, that is it exists, iff the store holds at least one
 * record of it of any kind of {@link TENANT_RECORDS}: a quota or any history. Pure.
 */
export function isKnownTenant(records: TenantRecords): boolean {
  return TENANT_RECORDS.some((record) => records[record]);
}

/**
 * What an operator's write would have done to a tenant that does not exist:
 * - `halt`, `quota` (a set or a change) and `key` (an API key created for it) would create it,
 *   and do when the caller says the tenant is new;
 * - `lift`, `release` and `delete` can only end what exists, so there is nothing to say new.
 */
export type TenantAct = 'halt' | 'quota' | 'key' | 'lift' | 'release' | 'delete' | 'webhook';

/** Every {@link TenantAct}, in the order the HTTP schema lists them. */
export const TENANT_ACTS: readonly TenantAct[] = ['halt', 'quota', 'key', 'lift', 'release', 'delete', 'webhook'];

/** True when `act` creates the tenant it names once its caller says the tenant is new (`halt`, `quota`, `key`). */
export function actCreatesTenant(act: TenantAct): boolean {
  return act === 'halt' || act === 'quota' || act === 'key';
}

/**
 * The known tenant whose name is nearest `tenant` by edit distance (Levenshtein, case ignored
 * first, then case counted, then byte order), or `null` when none is near enough to be the name
 * meant: at most a third of the longer name's length apart, and never more than 3 edits (at least
 * 1 is always allowed). `tenant` itself is never suggested. Pure.
 */
export function nearestTenant(tenant: string, known: readonly string[]): string | null {
  let best: { name: string; folded: number; exact: number } | null = null;
  for (const name of known) {
    if (name === tenant) continue;
    const folded = distance(name.toLowerCase(), tenant.toLowerCase());
    const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(name.length, tenant.length) / 3)));
    if (folded > allowed) continue;
    const exact = distance(name, tenant);
    if (best === null || folded < best.folded || (folded === best.folded && (exact < best.exact || (exact === best.exact && name < best.name)))) {
      best = { name, folded, exact };
    }
  }
  return best?.name ?? null;
}

/** An unknown tenant as a refusal names it: the tenant, the nearest known one (or `null`) and the act refused. */
export interface UnknownTenant {
  readonly tenant: string;
  readonly suggestion: string | null;
  readonly act: TenantAct;
}

/** How the library says a tenant is new: the `newTenant` option of `halt`, `setQuota`, `updateQuota` and `keys.create`. */
export const LIBRARY_NEW_TENANT_HINT = 'pass newTenant: true';

/**
 * The sentence that refuses an act on an unknown tenant: it names the tenant (and `where`, when
 * given: `store sqlite:./q.db`), suggests the nearest known one, and, when the act would create the
 * tenant, says how: `newTenantHint` is the caller's own way to say the tenant is new (`pass
 * --new-tenant` in the CLI, `repeat the request with ?newTenant=true` over HTTP,
 * {@link LIBRARY_NEW_TENANT_HINT} in the library). For example `tenant 'acmee' does not exist: it
 * has no quota and no history; did you mean 'acme'? pass --new-tenant to create 'acmee'`.
 */
export function unknownTenantMessage(unknown: UnknownTenant, newTenantHint: string, where?: string): string {
  const { tenant, suggestion, act } = unknown;
  const nothing = act === 'lift' ? ', so it has no halt to lift' : act === 'release' ? ', so it has no run to release' : act === 'delete' ? ', so there is nothing to delete' : act === 'webhook' ? ' (set its quota first: an endpoint of a tenant that does not exist would never receive an event)' : '';
  const meant = suggestion === null ? '; no known tenant has a name near it' : `; did you mean '${suggestion}'?`;
  const create = actCreatesTenant(act) ? `${suggestion === null ? ';' : ''} ${newTenantHint} to create '${tenant}'` : '';
  return `tenant '${tenant}' does not exist${where === undefined ? '' : ` in ${where}`}: it has no quota and no history${nothing}${meant}${create}`;
}

/**
 * The `NOT_FOUND` fault refusing `act` on `tenant`, which does not exist (rules.md#l95), with
 * the nearest of `known` as its suggestion. `details`: `field: 'tenant'`, `tenant`, `act` and
 * `suggestion` (absent when none is near). The message is {@link unknownTenantMessage} with
 * `newTenantHint` (default {@link LIBRARY_NEW_TENANT_HINT}). Pure.
 */
export function unknownTenantError(tenant: string, known: readonly string[], act: TenantAct, newTenantHint = LIBRARY_NEW_TENANT_HINT): QuotaError {
  const unknown: UnknownTenant = { tenant, suggestion: nearestTenant(tenant, known), act };
  return new QuotaError('NOT_FOUND', unknownTenantMessage(unknown, newTenantHint), { details: unknownTenantDetails(unknown) });
}

/** The `details` of an unknown-tenant fault (and the members of its HTTP problem): `field`, `tenant`, `act`, `suggestion` when there is one. */
export function unknownTenantDetails(unknown: UnknownTenant): Record<string, unknown> {
  return {
    field: 'tenant',
    tenant: unknown.tenant,
    act: unknown.act,
    ...(unknown.suggestion === null ? {} : { suggestion: unknown.suggestion }),
  };
}

/**
 * The unknown tenant a fault refused, read back from its `details` (as {@link unknownTenantError}
 * wrote them, or as the typed client decoded them from a problem), or `null` for any other error.
 * The CLI and HTTP rephrase the message with their own way to say a tenant is new.
 */
export function unknownTenantOf(error: unknown): UnknownTenant | null {
  if (!(error instanceof QuotaError) || error.code !== 'NOT_FOUND') return null;
  const { field, tenant, act, suggestion } = error.details;
  if (field !== 'tenant' || typeof tenant !== 'string' || !TENANT_ACTS.includes(act as TenantAct)) return null;
  return { tenant, act: act as TenantAct, suggestion: typeof suggestion === 'string' ? suggestion : null };
}

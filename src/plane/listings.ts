import { describe } from '../core/amounts.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
import { requireIdentifier } from '../core/identifiers.js';
import type { Operator } from '../core/operator.js';
import type { QuotaStore } from '../store/store.js';
import type { AuditRecord, Held } from '../store/types.js';
import { storeCall, tenantHandle } from './store-call.js';

/** Rows a listing answers when the caller names no limit (contract §9.1 `--limit`, default 100). */
export const DEFAULT_LISTING_LIMIT = 100;
/** The largest page a listing answers, so one request cannot ask the store for everything at once. */
export const MAX_LISTING_LIMIT = 1000;

/** A page of a listing: at most `limit` rows, and whether more stood behind them. */
export interface ListingPage<T> {
  readonly items: T[];
  /** True when the store held more rows than the page: the listing read one more row than it answers (contract §9.2). */
  readonly truncated: boolean;
}

/**
 * A recorded lift, read back from the audit log (contract §9.2 `GET /halts?state=lifted`): the
 * scope key, who lifted it and when (`liftedAtMs`, Unix ms), and the halt it ended (its reason,
 * who threw it, when). `seq` is the audit row that records the lift.
 */
export interface LiftedHalt {
  readonly scope: string;
  readonly by: Operator;
  readonly liftedAtMs: number;
  readonly reason: string;
  readonly thrownBy: Operator;
  readonly thrownAtMs: number;
  readonly seq: number;
}

/**
 * Read-only listings behind the HTTP operator routes (issue #4), over store methods that already
 * exist: slot holders (`runningRuns`), holds (`reservations`), recorded lifts (`auditLog`) and
 * tenants. Kept beside the plane rather than inside it, so adding them changed no plane verb.
 * Every method validates its input (`INVALID_ARGUMENT` naming the field) and fails closed like the
 * plane (`STORE_UNAVAILABLE`).
 */
export interface PlaneListings {
  /** Every tenant the store has rows of, in byte order. */
  tenants(): Promise<string[]>;
  /** Runs holding one of the tenant's slots, ascending run id (contract §6.14). */
  slotHolders(tenant: string, options?: { limit?: number | undefined }): Promise<ListingPage<string>>;
  /** The tenant's holds, ascending run id (contract §6.5). */
  reservations(tenant: string, options?: { limit?: number | undefined }): Promise<ListingPage<Held>>;
  /** The tenant's recorded lifts, newest first (contract §9.1 `--lifted`). */
  liftedHalts(tenant: string, options?: { limit?: number | undefined }): Promise<ListingPage<LiftedHalt>>;
}

/** Builds the {@link PlaneListings} over `store` (the store the plane runs on). */
export function createPlaneListings(options: { store: QuotaStore }): PlaneListings {
  const { store } = options;
  return Object.freeze({
    async tenants() {
      return storeCall('tenants', () => store.tenants());
    },
    async slotHolders(tenant, listing) {
      const id = requireIdentifier('tenant', tenant);
      const limit = listingLimit(listing?.limit);
      const runs = await storeCall('runningRuns', () => tenantHandle(store, id).runningRuns(limit + 1));
      return page(runs, limit);
    },
    async reservations(tenant, listing) {
      const id = requireIdentifier('tenant', tenant);
      const limit = listingLimit(listing?.limit);
      const held = await storeCall('reservations', () => tenantHandle(store, id).reservations(limit + 1));
      return page(held, limit);
    },
    async liftedHalts(tenant, listing) {
      const id = requireIdentifier('tenant', tenant);
      const limit = listingLimit(listing?.limit);
      const rows = await storeCall('auditLog', () => tenantHandle(store, id).auditLog({ limit: limit + 1, action: 'lift' }));
      return page(rows.map((row) => liftedHaltOf(id, row)), limit);
    },
  } satisfies PlaneListings);
}

/** A listing's `limit`: 1 … {@link MAX_LISTING_LIMIT}, default {@link DEFAULT_LISTING_LIMIT}; else `INVALID_ARGUMENT` on `limit`. */
export function listingLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_LISTING_LIMIT;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_LISTING_LIMIT) {
    throw invalidArgument('limit', `must be a whole number from 1 to ${MAX_LISTING_LIMIT}, got ${describe(value)}`);
  }
  return value;
}

function page<T>(rows: T[], limit: number): ListingPage<T> {
  return { items: rows.slice(0, limit), truncated: rows.length > limit };
}

// The plane writes a lift's audit detail as { reason, thrownBy, thrownBasis, thrownAtMs } (halts.ts).
// A row in another shape is not skipped or filled in: the audit log is evidence, so it reads as corruption.
function liftedHaltOf(tenant: string, row: AuditRecord): LiftedHalt {
  const { reason, thrownBy, thrownBasis, thrownAtMs } = row.detail;
  if (
    typeof reason !== 'string' ||
    typeof thrownBy !== 'string' ||
    (thrownBasis !== 'asserted' && thrownBasis !== 'authenticated') ||
    typeof thrownAtMs !== 'number'
  ) {
    throw new QuotaError('STORE_CORRUPT', `audit row ${row.seq} of tenant '${tenant}' is a lift whose detail cannot be read`, {
      details: { tenant, seq: row.seq },
    });
  }
  return {
    scope: row.subject,
    by: row.by,
    liftedAtMs: row.atMs,
    reason,
    thrownBy: { actor: thrownBy, basis: thrownBasis },
    thrownAtMs,
    seq: row.seq,
  };
}

/** Minutes the refusal history keeps: the last hour. */
export const REFUSAL_HISTORY_MINUTES = 60;

const MINUTE_MS = 60_000;

/** One tenant's refusals per minute, oldest minute first. */
export interface TenantRefusals {
  readonly tenant: string;
  readonly total: number;
  readonly perMinute: readonly number[];
}

/**
 * The refusals of the last hour as this instance answered them (see {@link RefusalHistory}):
 * `minutes` the start of each minute (UTC ms), oldest first, ending with the current one; `tenants`
 * the busiest tenants (most refusals in the hour, then name), each with its count per minute;
 * `other` every other tenant summed per minute; `sinceMs` when this instance began counting.
 */
export interface RefusalHistorySnapshot {
  readonly atMs: number;
  readonly sinceMs: number;
  readonly minuteMs: number;
  readonly minutes: readonly number[];
  readonly tenants: readonly TenantRefusals[];
  readonly other: readonly number[];
  readonly tenantBound: number;
}

interface MinuteBucket {
  minute: number;
  readonly counts: Map<string, number>;
  other: number;
}

/**
 * Refused admissions per tenant per minute, over the last {@link REFUSAL_HISTORY_MINUTES} minutes,
 * counted in memory by this instance where it answers admissions: nothing is stored, another
 * instance keeps its own, and a restart starts from nothing (`sinceMs` says when). Memory is bounded:
 * a ring of 60 minutes, each counting at most `tenantBound` tenants by name (the first to be refused
 * in that minute) and the rest in one `other` count, the same bound `/metrics` puts on its
 * per-tenant series (http-defaults.ts `DEFAULT_METRICS_TENANTS`).
 */
export class RefusalHistory {
  private readonly ring: MinuteBucket[] = [];

  constructor(
    readonly tenantBound: number,
    readonly sinceMs: number,
  ) {
    for (let i = 0; i < REFUSAL_HISTORY_MINUTES; i += 1) this.ring.push({ minute: -1, counts: new Map(), other: 0 });
  }

  /** Counts one refused admission of `tenant` at `atMs` (this instance's clock). */
  record(tenant: string, atMs: number): void {
    const bucket = this.bucket(Math.floor(atMs / MINUTE_MS));
    if (bucket === null) return;
    const seen = bucket.counts.get(tenant);
    if (seen !== undefined) bucket.counts.set(tenant, seen + 1);
    else if (bucket.counts.size < this.tenantBound) bucket.counts.set(tenant, 1);
    else bucket.other += 1;
  }

  /** The last hour ending with the minute of `atMs`; at most `tenantBound` tenants by name, the rest in `other`. */
  snapshot(atMs: number): RefusalHistorySnapshot {
    const now = Math.floor(atMs / MINUTE_MS);
    const first = now - REFUSAL_HISTORY_MINUTES + 1;
    const minutes = Array.from({ length: REFUSAL_HISTORY_MINUTES }, (_, index) => (first + index) * MINUTE_MS);
    const perTenant = new Map<string, number[]>();
    const other = minutes.map(() => 0);
    for (const bucket of this.ring) {
      if (bucket.minute < first || bucket.minute > now) continue;
      const index = bucket.minute - first;
      other[index] = (other[index] ?? 0) + bucket.other;
      for (const [tenant, count] of bucket.counts) {
        let row = perTenant.get(tenant);
        if (row === undefined) perTenant.set(tenant, (row = minutes.map(() => 0)));
        row[index] = (row[index] ?? 0) + count;
      }
    }
    const ranked = [...perTenant.entries()]
      .map(([tenant, perMinute]) => ({ tenant, perMinute, total: perMinute.reduce((sum, n) => sum + n, 0) }))
      .sort((a, b) => b.total - a.total || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
    for (const row of ranked.slice(this.tenantBound)) row.perMinute.forEach((n, index) => (other[index] = (other[index] ?? 0) + n));
    return { atMs, sinceMs: this.sinceMs, minuteMs: MINUTE_MS, minutes, tenants: ranked.slice(0, this.tenantBound), other, tenantBound: this.tenantBound };
  }

  // The minute's bucket, emptied when it last held an older minute; null for a minute older than
  // the one its slot holds (a clock stepped back), which is dropped rather than wipe newer counts.
  private bucket(minute: number): MinuteBucket | null {
    const bucket = this.ring[((minute % REFUSAL_HISTORY_MINUTES) + REFUSAL_HISTORY_MINUTES) % REFUSAL_HISTORY_MINUTES] as MinuteBucket;
    if (bucket.minute > minute) return null;
    if (bucket.minute !== minute) {
      bucket.minute = minute;
      bucket.counts.clear();
      bucket.other = 0;
    }
    return bucket;
  }
}

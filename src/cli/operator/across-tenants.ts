import { MAX_LIST_LIMIT } from '../../plane/operator-types.js';
import { type CliIo, writeLine } from '../io.js';
import { renderTable, writeAnswer } from './format.js';

/**
 * Collects one listing over several tenants, in the order given, up to `limit` items in all.
 * Each tenant is asked for at most the room left (at least 1, so a tenant after a full page still
 * says whether it has more); `truncated` is true when some tenant had more than was shown.
 * `fetch` answers a tenant's page and whether that tenant had more (read, not guessed).
 */
export async function collectAcrossTenants<T>(
  tenants: readonly string[],
  limit: number,
  fetch: (tenant: string, want: number) => Promise<{ items: readonly T[]; truncated: boolean }>,
): Promise<{ items: (T & { tenant: string })[]; truncated: boolean }> {
  const items: (T & { tenant: string })[] = [];
  for (const tenant of tenants) {
    const room = limit - items.length;
    const page = await fetch(tenant, Math.max(room, 1));
    if (room === 0) {
      if (page.items.length > 0) return { items, truncated: true };
      continue;
    }
    items.push(...page.items.map((item) => ({ ...item, tenant })));
    if (page.truncated) return { items, truncated: true };
  }
  return { items, truncated: false };
}

/** A listing over several tenants, as an operator command prints it. */
export interface TenantListing<T> {
  /** The tenants, in order: `--tenant`, or every tenant of the target. */
  readonly tenants: readonly string[];
  /** At most this many items in all (`--limit`). */
  readonly limit: number;
  /** One tenant's page of at most `want` items, and whether it had more. */
  readonly fetch: (tenant: string, want: number) => Promise<{ items: readonly T[]; truncated: boolean }>;
  /** The member the items go under in the `--json` document (`runs`, `reservations`, `rows`). */
  readonly member: string;
  /** The line printed when nothing was found. */
  readonly empty: string;
  /** The table's header and one row per item, for a person at a terminal. */
  readonly header: readonly string[];
  readonly row: (item: T & { tenant: string }) => readonly string[];
}

/**
 * Collects a listing over tenants ({@link collectAcrossTenants}) and prints it: with `--json` one
 * document `{ <member>: items, truncated }`, else a table (or the `empty` line). Answers whether
 * `--limit` cut it, which the command turns into exit status 5.
 */
export async function printTenantListing<T>(io: CliIo, json: boolean, listing: TenantListing<T>): Promise<boolean> {
  const listed = await collectAcrossTenants(listing.tenants, listing.limit, listing.fetch);
  writeAnswer(io, json, { [listing.member]: listed.items, truncated: listed.truncated }, () =>
    listed.items.length === 0 ? `${listing.empty}\n` : renderTable(listing.header, listed.items.map(listing.row)),
  );
  // A person reading a table must not take a cut list for the whole (scripts read `truncated`).
  // --tenant narrows only a listing of several tenants (it is one tenant when --tenant was given).
  if (listed.truncated && !json) {
    const narrow = listing.tenants.length > 1 ? ' or narrow with --tenant' : '';
    writeLine(io.stderr, `quotaplane: showing the first ${listed.items.length}; there are more: raise --limit (up to ${MAX_LIST_LIMIT})${narrow}`);
  }
  return listed.truncated;
}

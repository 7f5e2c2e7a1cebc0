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

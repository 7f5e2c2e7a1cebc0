// The books of the upgrade fixture, read back through the public library API only (the package
// entries `quotaplane` and `quotaplane/http`), never with SQL: what docs/compatibility.md#stable-from-010
// promises reads the same after an upgrade. scripts/make-upgrade-fixture.ts writes what this reads
// from a store made by the release into test/fixtures/<release>/books.json; the upgrade tests read
// the upgraded store with it and compare.

import { KEYS_AUDIT_TENANT, PLANE_AUDIT_TENANT, type Plane, type QuotaStore } from '../../src/index.js';
import { hashApiKey } from '../../src/http/index.js';

/** The customer tenants of the fixture, and the reserved audit chains it also writes. */
export const FIXTURE_TENANTS = ['acme', 'globex', 'initech'] as const;
export const FIXTURE_AUDIT_CHAINS = [...FIXTURE_TENANTS, PLANE_AUDIT_TENANT, KEYS_AUDIT_TENANT] as const;

/**
 * The API key secrets of the fixture. They are test values, known on purpose: the upgraded store
 * must still find each key by its secret's hash (what `quotaplane serve` authenticates with).
 */
export const FIXTURE_KEY_SECRETS = {
  operator: 'qp_upgrade_fixture_operator_secret_0001',
  runner: 'qp_upgrade_fixture_runner_secret_0002',
  revoked: 'qp_upgrade_fixture_revoked_secret_0003',
} as const;

/** The periods whose figures are read: the fixture's month, and the days it wrote in. */
export const FIXTURE_PERIODS = ['2026-01', '2026-01-05'] as const;

/** One audit chain as read back: its length, its head, every row. */
export interface ChainBooks {
  readonly rows: number;
  readonly headSeq: number | null;
  readonly headHash: string | null;
  readonly entries: readonly { seq: number; atMs: number; action: string; subject: string; by: unknown; detail: unknown; hash: string }[];
}

/** Everything the upgrade tests hold a store to, as JSON data. */
export interface FixtureBooks {
  readonly atMs: number;
  readonly tenants: readonly string[];
  readonly perTenant: Readonly<Record<string, unknown>>;
  readonly audit: Readonly<Record<string, ChainBooks>>;
  readonly auditVerifies: boolean;
  readonly plane: { readonly ceiling: unknown; readonly status: unknown };
  readonly apiKeys: { readonly list: unknown; readonly bySecret: Readonly<Record<string, unknown>> };
  readonly attention: unknown;
}

/** A JSON round trip: `undefined` members dropped, so data read and data stored compare alike. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * Reads the fixture's books at `atMs` (the plane's clock must stand at `atMs` too: usage's queue
 * wait is read from it). Read-only: it changes nothing in the store.
 */
export async function readFixtureBooks(plane: Plane, store: QuotaStore, atMs: number): Promise<FixtureBooks> {
  const perTenant: Record<string, unknown> = {};
  for (const tenant of FIXTURE_TENANTS) {
    const usage: Record<string, unknown> = {};
    for (const period of FIXTURE_PERIODS) {
      // A daily tenant has no monthly figures and the other way round: read only its own kind.
      const quota = await plane.getQuota(tenant);
      const daily = quota?.period === 'daily';
      if (daily === (period.length === 10)) usage[period] = await plane.usage({ tenant, period });
    }
    const runs = await plane.runs({ tenant, limit: 1000 });
    perTenant[tenant] = {
      quota: await plane.getQuota(tenant),
      usage,
      runs: runs.runs,
      runsTruncated: runs.truncated,
      slotHolders: await plane.slotHolders({ tenant, limit: 1000 }),
      reservations: await plane.reservations({ tenant, limit: 1000 }),
      halts: await plane.halts(tenant),
      liftedHalts: await plane.liftedHalts({ tenant, limit: 1000 }),
      spendHistory: await plane.spendHistory({ tenant, periods: 3, atMs }),
      rateWindows: await plane.rateWindows({ tenant, atMs }),
      waitQueue: await store.tenant(tenant).waitQueue({ atMs }),
    };
  }
  const audit: Record<string, ChainBooks> = {};
  for (const chain of FIXTURE_AUDIT_CHAINS) {
    const rows = (await plane.auditLog({ tenant: chain, limit: 1000 })).rows;
    const head = rows[0];
    audit[chain] = {
      rows: rows.length,
      headSeq: head?.seq ?? null,
      headHash: head?.hash ?? null,
      entries: [...rows].reverse().map((row) => ({
        seq: row.seq,
        atMs: row.atMs,
        action: row.action,
        subject: row.subject,
        by: row.by,
        detail: row.detail,
        hash: row.hash,
      })),
    };
  }
  const keys = store.apiKeys?.();
  const bySecret: Record<string, unknown> = {};
  for (const [name, secret] of Object.entries(FIXTURE_KEY_SECRETS)) bySecret[name] = (await keys?.findByHash(hashApiKey(secret))) ?? null;
  return plain({
    atMs,
    tenants: await plane.tenants(),
    perTenant,
    audit,
    auditVerifies: (await plane.verifyAudit()).ok,
    plane: { ceiling: await plane.getPlaneCeiling(), status: await plane.planeStatus() },
    apiKeys: { list: (await keys?.list()) ?? null, bySecret },
    // What needs a person, without its sentences: their wording may improve in any release.
    attention: (await plane.attention({ atMs })).conditions.map(({ summary: _summary, remedy: _remedy, ...condition }) => condition),
  });
}

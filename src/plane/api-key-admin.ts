import { invalidArgument, QuotaError } from '../core/errors.js';
import { requireCustomerTenant } from '../core/identifiers.js';
import type { Operator } from '../core/operator.js';
import { ALL_TENANTS, keyExpired, requireNewApiKey, type ApiKeyRecord, type ApiKeyRole, type ApiKeyStore, type NewApiKey, type RevokeOutcome } from '../store/api-keys.js';
import type { QuotaStore } from '../store/store.js';
import { storeCall } from './store-call.js';
import { parseNewTenant, requireExistingTenant } from './known-tenant.js';
import type { AuditAction } from '../core/audit-actions.js';
import { KEYS_AUDIT_TENANT } from '../core/identifiers.js';

/** A key just created: its record and the secret, shown this once. */
export interface CreatedApiKey extends ApiKeyRecord {
  /** The key itself (`qp_…`); only its SHA-256 is stored. */
  readonly key: string;
}

/** What `rotate` did: the new key (secret shown once) and the old one's id and new expiry. */
export interface RotatedApiKey {
  readonly created: CreatedApiKey;
  readonly old: { readonly id: string; readonly expiresAtMs: number };
}

/** What `revoke` did to the key `id`. */
export interface RevokedApiKey {
  readonly id: string;
  readonly outcome: RevokeOutcome;
}

/**
 * Managing API keys, the same way on a store (`--store`, the operator asserted by `--actor`) and
 * over HTTP (the operator the calling key's name, authenticated); see
 * docs/guides/operating.md#api-keys.
 * - `create`: makes a key and answers it with its secret, shown once; audited as `key.create`;
 * - `list`: the keys the caller may see, revoked ones included, oldest first, never a secret;
 * - `revoke`: revokes the key `id`; audited as `key.revoke` when it was usable. An id the caller
 *   may not see answers `not-found`;
 * - `rotate`: makes a new key with the old one's name, role and tenant and lets the old one expire
 *   after `overlapMs` (never later than it already would); audited as `key.rotate` on the old key,
 *   then `key.create` on the new one. The new key expires after the old one's lifetime
 *   (`expiresAtMs − createdAtMs`) unless `expiresInMs` says otherwise; a key without expiry makes
 *   one without. An id the caller may not see, a revoked or an expired key is `NOT_FOUND`.
 * Every act that writes appends its audit row first (who, key id, name, role, tenant), in the
 * chain of the key's tenant, or of {@link KEYS_AUDIT_TENANT} for a key of every tenant.
 */
export interface ApiKeyAdmin {
  /**
   * A key for `tenant`, which must exist (rules.md#l95) unless `newTenant` is true: otherwise
   * `NOT_FOUND` naming it and the nearest known tenant, and nothing is written. A key of every
   * tenant (`*`) names no tenant.
   */
  create(input: {
    tenant: string;
    role: ApiKeyRole;
    name?: string | undefined;
    newTenant?: boolean | undefined;
    /** The key expires this many ms after it is made (by the clock of whoever makes it); absent: never. */
    expiresInMs?: number | undefined;
  }): Promise<CreatedApiKey>;
  list(): Promise<ApiKeyRecord[]>;
  revoke(id: string): Promise<RevokedApiKey>;
  rotate(id: string, input: { overlapMs: number; expiresInMs?: number | undefined }): Promise<RotatedApiKey>;
}

/** The longest expiry or overlap accepted: 100 years, in ms. */
export const MAX_KEY_DURATION_MS = 100 * 365 * 24 * 3_600_000;

function requireDurationMs(field: string, value: unknown, minimum: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum || value > MAX_KEY_DURATION_MS) {
    throw invalidArgument(field, `must be whole milliseconds from ${minimum} to ${MAX_KEY_DURATION_MS} (100 years), got ${String(value)}`);
  }
  return value;
}

/**
 * The {@link ApiKeyAdmin} over a store's keys. `by` is the operator recorded (`null`: the caller
 * only reads, and an act that writes throws `INVALID_ARGUMENT` on `by`); `covers` says which key
 * tenants the caller may see and manage (default: every one); `mint` makes a new key (the HTTP
 * layer's `mintApiKey`); `nowMs` is the clock. The audit row and the key change are two
 * transactions, row first: a failure between them leaves a row for a change that did not happen,
 * never a change without its row.
 */
export function storeApiKeyAdmin(options: {
  readonly store: QuotaStore;
  readonly keys: ApiKeyStore;
  readonly by: Operator | null;
  readonly mint: (input: { role: ApiKeyRole; tenant: string; name?: string | undefined; atMs: number }) => { secret: string; key: NewApiKey };
  readonly nowMs: () => number;
  readonly covers?: ((keyTenant: string) => boolean) | undefined;
}): ApiKeyAdmin {
  const covers = options.covers ?? (() => true);
  const operator = (verb: string): Operator => {
    if (options.by === null) throw invalidArgument('by', `${verb} writes, so it needs an operator to record`);
    return options.by;
  };
  const audit = async (
    action: Extract<AuditAction, 'key.create' | 'key.revoke' | 'key.rotate'>,
    key: Pick<ApiKeyRecord, 'id' | 'name' | 'role' | 'tenant'>,
    by: Operator,
    atMs: number,
    extra: Record<string, string | number> = {},
  ) => {
    const chain = key.tenant === ALL_TENANTS ? KEYS_AUDIT_TENANT : key.tenant;
    await storeCall('appendAudit', () =>
      options.store.tenant(chain).appendAudit({ atMs, by, action, subject: key.id, detail: { name: key.name, role: key.role, tenant: key.tenant, ...extra } }),
    );
  };
  const mint = (input: { role: ApiKeyRole; tenant: string; name?: string | undefined }, atMs: number, expiresInMs: number | undefined) => {
    const minted = options.mint({ role: input.role, tenant: input.tenant, name: input.name, atMs });
    const expiresAtMs = expiresInMs === undefined ? null : atMs + requireDurationMs('expiresInMs', expiresInMs, 1);
    return { secret: minted.secret, key: requireNewApiKey({ ...minted.key, expiresAtMs }) };
  };
  const created = (key: NewApiKey, secret: string): CreatedApiKey => {
    // In the order the record lists its fields (the HTTP reply serializes in that order).
    const { id, name, role, tenant, createdAtMs } = key;
    return { id, name, role, tenant, createdAtMs, revokedAtMs: null, expiresAtMs: key.expiresAtMs ?? null, lastUsedAtMs: null, key: secret };
  };
  const findCovered = async (id: string) => (await storeCall('listKeys', () => options.keys.list())).find((key) => key.id === id && covers(key.tenant));
  return {
    async create(input) {
      const by = operator('keys create');
      const atMs = options.nowMs();
      const minted = mint(input, atMs, input.expiresInMs);
      const key = minted.key;
      // quotaplane's own audit chains are no tenant a key may act for.
      if (key.tenant !== ALL_TENANTS) requireCustomerTenant('tenant', key.tenant);
      if (!covers(key.tenant)) throw invalidArgument('tenant', `is not a tenant this key may manage keys for; use an operator key for '${key.tenant}' or for every tenant`);
      const newTenant = parseNewTenant(input.newTenant);
      if (key.tenant !== ALL_TENANTS) await requireExistingTenant(options.store, key.tenant, 'key', newTenant);
      await audit('key.create', key, by, atMs, key.expiresAtMs === null || key.expiresAtMs === undefined ? {} : { expiresAtMs: key.expiresAtMs });
      await storeCall('createKey', () => options.keys.create(key));
      return created(key, minted.secret);
    },
    async list() {
      return (await storeCall('listKeys', () => options.keys.list())).filter((key) => covers(key.tenant));
    },
    async revoke(id) {
      const by = operator('keys revoke');
      const atMs = options.nowMs();
      const found = await findCovered(id);
      if (found === undefined) return { id, outcome: 'not-found' };
      if (found.revokedAtMs !== null) return { id, outcome: 'already-revoked' };
      await audit('key.revoke', found, by, atMs);
      return { id, outcome: await storeCall('revokeKey', () => options.keys.revoke(id, atMs)) };
    },
    async rotate(id, input) {
      const by = operator('keys rotate');
      const atMs = options.nowMs();
      const overlapMs = requireDurationMs('overlapMs', input.overlapMs, 0);
      const found = await findCovered(id);
      if (found === undefined || found.revokedAtMs !== null || keyExpired(found, atMs)) {
        const why = found === undefined ? 'no key' : found.revokedAtMs !== null ? 'a revoked key' : 'an expired key';
        throw new QuotaError('NOT_FOUND', `${id} is ${why} that this caller may rotate; rotate a usable key, or create a new one with keys create`, {
          details: { id },
        });
      }
      const lifetimeMs = found.expiresAtMs === null ? undefined : Math.max(1, found.expiresAtMs - found.createdAtMs);
      const minted = mint(found, atMs, input.expiresInMs ?? lifetimeMs);
      const oldExpiresAtMs = Math.min(atMs + overlapMs, found.expiresAtMs ?? Number.MAX_SAFE_INTEGER);
      await audit('key.rotate', found, by, atMs, { rotatedTo: minted.key.id, expiresAtMs: oldExpiresAtMs });
      await audit('key.create', minted.key, by, atMs, {
        rotatedFrom: found.id,
        ...(minted.key.expiresAtMs === null || minted.key.expiresAtMs === undefined ? {} : { expiresAtMs: minted.key.expiresAtMs }),
      });
      await storeCall('createKey', () => options.keys.create(minted.key));
      await storeCall('expireKey', () => options.keys.expire(found.id, oldExpiresAtMs));
      return { created: created(minted.key, minted.secret), old: { id: found.id, expiresAtMs: oldExpiresAtMs } };
    },
  };
}

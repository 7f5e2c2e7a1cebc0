import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { requireIdentifier } from '../core/identifiers.js';

/**
 * What an API key may do:
 * - `runner`: the runner routes (`/v1/runs…`, `/v1/usage`) for its own tenant only;
 * - `operator`: the operator routes (`/v1/tenants/{tenant}/…`) for the tenant it names, or for
 *   every tenant when its tenant is {@link ALL_TENANTS}; it may also call the runner routes for a
 *   tenant it covers.
 */
export type ApiKeyRole = 'runner' | 'operator';

/** Every accepted {@link ApiKeyRole}, in the order help texts list them. */
export const API_KEY_ROLES: readonly ApiKeyRole[] = Object.freeze(['runner', 'operator']);

/** The tenant of an operator key that covers every tenant (`quotaplane keys create --tenant '*'`). */
export const ALL_TENANTS = '*';

/**
 * One API key as the store keeps it. The secret itself is never stored, only its SHA-256
 * (`NewApiKey.hash`), so this record is safe to list.
 * - `id`: `key_<ULID>`, what `keys revoke` names;
 * - `name`: who acts with the key, recorded as the operator of halts, lifts and quota changes
 *   made through HTTP (`{ actor: name, basis: 'authenticated' }`);
 * - `tenant`: the tenant it acts for, or {@link ALL_TENANTS} (operator keys only);
 * - `createdAtMs`, `revokedAtMs`: Unix ms; `revokedAtMs` is `null` while the key is usable;
 * - `expiresAtMs`: Unix ms from which the key is refused, or `null` for a key that never expires
 *   (every key made before schema 0003); a rotated key's old secret gets one;
 * - `lastUsedAtMs`: Unix ms of a request it authenticated, coarse: a server records it at most once
 *   a minute per key ({@link LAST_USED_GRANULARITY_MS}), so it may trail the true last use by that
 *   much; `null` when never recorded.
 */
export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly role: ApiKeyRole;
  readonly tenant: string;
  readonly createdAtMs: number;
  readonly revokedAtMs: number | null;
  readonly expiresAtMs: number | null;
  readonly lastUsedAtMs: number | null;
}

/** How coarse `lastUsedAtMs` is: a server records a key's use at most once per this many ms. */
export const LAST_USED_GRANULARITY_MS = 60_000;

/** True when `key` is past its expiry at `nowMs` (a key with no expiry never is). */
export function keyExpired(key: Pick<ApiKeyRecord, 'expiresAtMs'>, nowMs: number): boolean {
  return key.expiresAtMs !== null && nowMs >= key.expiresAtMs;
}

/**
 * A key to store: its record (not yet revoked, never used) and `hash`, the SHA-256 of the secret
 * as 64 lowercase hex digits. `expiresAtMs` absent or `null`: it never expires.
 */
export interface NewApiKey {
  readonly id: string;
  readonly name: string;
  readonly role: ApiKeyRole;
  readonly tenant: string;
  readonly createdAtMs: number;
  readonly hash: string;
  readonly expiresAtMs?: number | null | undefined;
}

/** What `expire` found: the key now expires at the instant asked (or kept an earlier expiry), was revoked, or does not exist. */
export type ExpireOutcome = 'expiring' | 'revoked' | 'not-found';

/** One recorded use of a key, for `recordUse`. */
export interface KeyUse {
  readonly id: string;
  readonly atMs: number;
}

/** What `revoke` found: the key was usable and is now revoked, was revoked already, or does not exist. */
export type RevokeOutcome = 'revoked' | 'already-revoked' | 'not-found';

/**
 * The API keys of a deployment, kept beside the quota rows. Keys are not tenant rows:
 * an operator key may cover every tenant, so this port hangs off the store, not a tenant handle.
 * Every method is one transaction; a store that cannot answer throws `STORE_UNAVAILABLE`.
 */
export interface ApiKeyStore {
  /** Stores a new key. Throws `INVALID_ARGUMENT` naming the field for a malformed key, `CONFLICT` when its id or hash exists. */
  create(key: NewApiKey): Promise<void>;
  /**
   * Stores `key` only when the store holds no key at all, revoked ones included, deciding and
   * inserting in one transaction so two servers starting together create one first key between
   * them. Answers whether it stored the key.
   */
  createFirst(key: NewApiKey): Promise<boolean>;
  /** The key whose secret hashes to `hash` (64 hex), revoked or not, or `null`. */
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Every key, revoked ones included, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes the key `id` at `atMs` (Unix ms); idempotent. */
  revoke(id: string, atMs: number): Promise<RevokeOutcome>;
  /**
   * Makes the usable key `id` expire at `atMs` (Unix ms), or keeps its expiry when that is earlier
   * (rotation's overlap never lengthens a key's life). A revoked key is left as it is.
   */
  expire(id: string, atMs: number): Promise<ExpireOutcome>;
  /**
   * Records uses of keys (`lastUsedAtMs`), each only moving a key's instant forward; ids that do
   * not exist are ignored. Callers batch and throttle it: it is off the request's critical path.
   */
  recordUse(uses: readonly KeyUse[]): Promise<void>;
  /**
   * Stores a dashboard session of the key `keyId` (`hash`: the SHA-256 of its token), removing
   * every session that ended by `createdAtMs` on the way. Throws `INVALID_ARGUMENT` naming the field.
   */
  createSession(session: NewKeySession): Promise<void>;
  /** The key of the session whose token hashes to `hash`, while the session lasts at `nowMs`; else `null`. The key itself may be revoked or expired: the caller checks. */
  findSession(hash: string, nowMs: number): Promise<ApiKeyRecord | null>;
  /** Ends the session whose token hashes to `hash`; answers whether there was one. */
  endSession(hash: string): Promise<boolean>;
}

/** A dashboard session to store: its token's SHA-256 (64 hex), its key, and its lifetime in Unix ms. */
export interface NewKeySession {
  readonly hash: string;
  readonly keyId: string;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
}

/** Validates a session to store; throws `INVALID_ARGUMENT` naming the field. */
export function requireNewKeySession(value: unknown): NewKeySession {
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (!isApiKeyHash(record.hash)) throw invalidArgument('hash', 'must be the SHA-256 of the session token as 64 lowercase hex digits');
  if (typeof record.keyId !== 'string' || !KEY_ID.test(record.keyId)) throw invalidArgument('keyId', `must be key_<ULID>, got ${describe(record.keyId)}`);
  const { createdAtMs, expiresAtMs } = record;
  if (typeof createdAtMs !== 'number' || !Number.isSafeInteger(createdAtMs) || createdAtMs < 0) {
    throw invalidArgument('createdAtMs', `must be an instant in Unix milliseconds, got ${describe(createdAtMs)}`);
  }
  if (typeof expiresAtMs !== 'number' || !Number.isSafeInteger(expiresAtMs) || expiresAtMs <= createdAtMs) {
    throw invalidArgument('expiresAtMs', `must be an instant in Unix milliseconds after createdAtMs, got ${describe(expiresAtMs)}`);
  }
  return { hash: record.hash, keyId: record.keyId, createdAtMs, expiresAtMs };
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Validates a key to store, shared by every adapter so both backends refuse the same inputs.
 * Throws `INVALID_ARGUMENT` naming the field: an id that is not `key_<ULID>`, a name that is not an
 * identifier, an unknown role, a runner key for {@link ALL_TENANTS}, a bad instant or a hash that
 * is not 64 lowercase hex digits.
 */
export function requireNewApiKey(value: unknown): NewApiKey {
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof record.id !== 'string' || !KEY_ID.test(record.id)) {
    throw invalidArgument('id', `must be key_<ULID>, got ${describe(record.id)}`);
  }
  const name = requireIdentifier('name', record.name);
  const role = record.role;
  if (role !== 'runner' && role !== 'operator') {
    throw invalidArgument('role', `must be one of ${API_KEY_ROLES.join(', ')}, got ${describe(role)}`);
  }
  const tenant = requireIdentifier('tenant', record.tenant);
  if (role === 'runner' && tenant === ALL_TENANTS) {
    throw invalidArgument('tenant', `a runner key acts for one tenant; name it, or make an operator key for '${ALL_TENANTS}'`);
  }
  const createdAtMs = record.createdAtMs;
  if (typeof createdAtMs !== 'number' || !Number.isSafeInteger(createdAtMs) || createdAtMs < 0) {
    throw invalidArgument('createdAtMs', `must be an instant in Unix milliseconds, got ${describe(createdAtMs)}`);
  }
  if (typeof record.hash !== 'string' || !SHA256_HEX.test(record.hash)) {
    throw invalidArgument('hash', 'must be the SHA-256 of the key as 64 lowercase hex digits');
  }
  const expiresAtMs = record.expiresAtMs ?? null;
  if (expiresAtMs !== null && (typeof expiresAtMs !== 'number' || !Number.isSafeInteger(expiresAtMs) || expiresAtMs <= createdAtMs)) {
    throw invalidArgument('expiresAtMs', `must be an instant in Unix milliseconds after createdAtMs, or null, got ${describe(expiresAtMs)}`);
  }
  return { id: record.id, name, role, tenant, createdAtMs, hash: record.hash, expiresAtMs };
}

/** The key uses to record, checked: each id a key id, each instant Unix ms. Throws `INVALID_ARGUMENT` naming the field. */
export function requireKeyUses(value: unknown): KeyUse[] {
  if (!Array.isArray(value)) throw invalidArgument('uses', `must be an array, got ${describe(value)}`);
  return value.map((use: unknown) => {
    const record = (typeof use === 'object' && use !== null ? use : {}) as Record<string, unknown>;
    if (typeof record.id !== 'string' || !KEY_ID.test(record.id)) throw invalidArgument('id', `must be key_<ULID>, got ${describe(record.id)}`);
    const atMs = record.atMs;
    if (typeof atMs !== 'number' || !Number.isSafeInteger(atMs) || atMs < 0) {
      throw invalidArgument('atMs', `must be an instant in Unix milliseconds, got ${describe(atMs)}`);
    }
    return { id: record.id, atMs };
  });
}

/** True when `hash` is shaped like a stored key hash (64 lowercase hex digits). */
export function isApiKeyHash(hash: unknown): hash is string {
  return typeof hash === 'string' && SHA256_HEX.test(hash);
}

/** True when `key` may act for `tenant`: its own tenant, or any tenant for an all-tenant key. */
export function keyCoversTenant(key: Pick<ApiKeyRecord, 'tenant'>, tenant: string): boolean {
  return key.tenant === ALL_TENANTS || key.tenant === tenant;
}

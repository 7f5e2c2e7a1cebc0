import { describe } from '../../core/amounts.js';
import { invalidArgument, QuotaError } from '../../core/errors.js';
import { isIdentifier } from '../../core/identifiers.js';
import {
  isApiKeyHash,
  requireKeyUses,
  requireNewApiKey,
  requireNewKeySession,
  type ExpireOutcome,
  type NewKeySession,
  type KeyUse,
  type ApiKeyRecord,
  type ApiKeyStore,
  type NewApiKey,
  type RevokeOutcome,
} from '../api-keys.js';
import { requireInstantMs } from '../../core/instant.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** A key with this id or secret hash already exists (the caller checks inside the inserting transaction). */
const SELECT_CLASH = 'SELECT key_id FROM quotaplane_api_keys WHERE key_id = @id OR key_hash = @hash';
/** Whether any key was ever stored, revoked ones included: "first start" means none. */
const SELECT_ANY = 'SELECT EXISTS (SELECT 1 FROM quotaplane_api_keys) AS present';
/** Stores a key; only its hash, never its secret. */
const INSERT_KEY = `INSERT INTO quotaplane_api_keys (key_id, key_hash, name, role, tenant, created_at_ms, revoked_at_ms, expires_at_ms)
  VALUES (@id, @hash, @name, @role, @tenant, @createdAtMs, NULL, @expiresAtMs)`;
const COLUMNS = 'key_id, name, role, tenant, created_at_ms, revoked_at_ms, expires_at_ms, last_used_at_ms';
/** The key a secret hashes to; the unique index on key_hash makes this one probe per request. */
const SELECT_BY_HASH = `SELECT ${COLUMNS} FROM quotaplane_api_keys WHERE key_hash = @hash`;
/** Every key, oldest first (ids are ULIDs, so id order is creation order). */
const LIST_KEYS = `SELECT ${COLUMNS} FROM quotaplane_api_keys ORDER BY key_id`;
/** One key's revocation state. */
const SELECT_REVOKED = 'SELECT revoked_at_ms FROM quotaplane_api_keys WHERE key_id = @id';
/** Brings a usable key's expiry forward to @atMs; an earlier expiry is kept. */
const EXPIRE_KEY = `UPDATE quotaplane_api_keys SET expires_at_ms = @atMs
  WHERE key_id = @id AND revoked_at_ms IS NULL AND (expires_at_ms IS NULL OR expires_at_ms > @atMs)`;
/** Records a use; the instant only moves forward. */
const RECORD_USE = `UPDATE quotaplane_api_keys SET last_used_at_ms = @atMs
  WHERE key_id = @id AND (last_used_at_ms IS NULL OR last_used_at_ms < @atMs)`;
/** Revokes a usable key; the first revocation instant is kept. */
const REVOKE_KEY = 'UPDATE quotaplane_api_keys SET revoked_at_ms = @atMs WHERE key_id = @id AND revoked_at_ms IS NULL';

/** Sessions that ended by @atMs go when a new one is made, so the table holds live ones (and a few ended since). */
const DROP_ENDED_SESSIONS = 'DELETE FROM quotaplane_key_sessions WHERE expires_at_ms <= @atMs';
const INSERT_SESSION = `INSERT INTO quotaplane_key_sessions (session_hash, key_id, created_at_ms, expires_at_ms)
  VALUES (@hash, @keyId, @createdAtMs, @expiresAtMs)`;
/** The key of a live session: one probe of the session's primary key, one of the key's. */
const SELECT_SESSION_KEY = `SELECT ${COLUMNS.split(', ').map((column) => `k.${column}`).join(', ')}
  FROM quotaplane_key_sessions s JOIN quotaplane_api_keys k ON k.key_id = s.key_id
  WHERE s.session_hash = @hash AND s.expires_at_ms > @nowMs`;
const DELETE_SESSION = 'DELETE FROM quotaplane_key_sessions WHERE session_hash = @hash';

interface KeyRow {
  key_id: string;
  name: string;
  role: string;
  tenant: string;
  created_at_ms: number;
  revoked_at_ms: number | null;
  expires_at_ms: number | null;
  last_used_at_ms: number | null;
}

/**
 * The SQLite adapter of {@link ApiKeyStore} (`quotaplane_api_keys`), on the
 * store's one connection. Deciding writes are `BEGIN IMMEDIATE`, so `createFirst` is exact across
 * processes sharing the file.
 */
export class SqliteApiKeyStore implements ApiKeyStore {
  readonly #conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.#conn = conn;
  }

  async create(key: NewApiKey): Promise<void> {
    const checked = requireNewApiKey(key);
    await this.#conn.write(() => {
      if (this.#conn.get(SELECT_CLASH, { id: checked.id, hash: checked.hash }) !== undefined) {
        throw new QuotaError('CONFLICT', `an API key with id '${checked.id}' or the same secret already exists; generate a new key`, {
          details: { id: checked.id },
        });
      }
      this.#conn.run(INSERT_KEY, params(checked));
    });
  }

  async createFirst(key: NewApiKey): Promise<boolean> {
    const checked = requireNewApiKey(key);
    return this.#conn.write(() => {
      const row = this.#conn.get<{ present: number }>(SELECT_ANY, {});
      if (row !== undefined && row.present !== 0) return false;
      this.#conn.run(INSERT_KEY, params(checked));
      return true;
    });
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
    const row = await this.#conn.read(() => this.#conn.get<KeyRow>(SELECT_BY_HASH, { hash }));
    return row === undefined ? null : decodeKey(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (await this.#conn.read(() => this.#conn.all<KeyRow>(LIST_KEYS, {}))).map(decodeKey);
  }

  async revoke(id: string, atMs: number): Promise<RevokeOutcome> {
    if (typeof id !== 'string' || !isIdentifier(id)) throw invalidArgument('id', `must be a key id (key_<ULID>), got ${describe(id)}`);
    const instant = requireInstantMs('atMs', atMs);
    return this.#conn.write(() => {
      const row = this.#conn.get<{ revoked_at_ms: number | null }>(SELECT_REVOKED, { id });
      if (row === undefined) return 'not-found';
      if (row.revoked_at_ms !== null) return 'already-revoked';
      this.#conn.run(REVOKE_KEY, { id, atMs: instant });
      return 'revoked';
    });
  }

  async expire(id: string, atMs: number): Promise<ExpireOutcome> {
    if (typeof id !== 'string' || !isIdentifier(id)) throw invalidArgument('id', `must be a key id (key_<ULID>), got ${describe(id)}`);
    const instant = requireInstantMs('atMs', atMs);
    return this.#conn.write(() => {
      const row = this.#conn.get<{ revoked_at_ms: number | null }>(SELECT_REVOKED, { id });
      if (row === undefined) return 'not-found';
      if (row.revoked_at_ms !== null) return 'revoked';
      this.#conn.run(EXPIRE_KEY, { id, atMs: instant });
      return 'expiring';
    });
  }

  async createSession(session: NewKeySession): Promise<void> {
    const checked = requireNewKeySession(session);
    await this.#conn.write(() => {
      this.#conn.run(DROP_ENDED_SESSIONS, { atMs: checked.createdAtMs });
      this.#conn.run(INSERT_SESSION, { ...checked });
    });
  }

  async findSession(hash: string, nowMs: number): Promise<ApiKeyRecord | null> {
    if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
    const instant = requireInstantMs('nowMs', nowMs);
    const row = await this.#conn.read(() => this.#conn.get<KeyRow>(SELECT_SESSION_KEY, { hash, nowMs: instant }));
    return row === undefined ? null : decodeKey(row);
  }

  async endSession(hash: string): Promise<boolean> {
    if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
    return this.#conn.write(() => this.#conn.run(DELETE_SESSION, { hash }) > 0);
  }

  async recordUse(uses: readonly KeyUse[]): Promise<void> {
    const checked = requireKeyUses(uses);
    if (checked.length === 0) return;
    await this.#conn.write(() => {
      for (const use of checked) this.#conn.run(RECORD_USE, { id: use.id, atMs: use.atMs });
    });
  }
}

function params(key: NewApiKey) {
  return { id: key.id, hash: key.hash, name: key.name, role: key.role, tenant: key.tenant, createdAtMs: key.createdAtMs, expiresAtMs: key.expiresAtMs ?? null };
}

// A row that does not read back as a key is never skipped or guessed at: the key table decides
// who may act, so an unreadable row is corruption (the same rule as for halts).
function decodeKey(row: KeyRow): ApiKeyRecord {
  if (
    (row.role !== 'runner' && row.role !== 'operator') ||
    !isIdentifier(row.name) ||
    !isIdentifier(row.tenant) ||
    !Number.isSafeInteger(row.created_at_ms) ||
    (row.revoked_at_ms !== null && !Number.isSafeInteger(row.revoked_at_ms)) ||
    (row.expires_at_ms !== null && !Number.isSafeInteger(row.expires_at_ms)) ||
    (row.last_used_at_ms !== null && !Number.isSafeInteger(row.last_used_at_ms))
  ) {
    throw new QuotaError('STORE_CORRUPT', `the SQLite store holds an unreadable API key row '${row.key_id}'`, {
      details: { backend: 'sqlite', id: row.key_id },
    });
  }
  return {
    id: row.key_id,
    name: row.name,
    role: row.role,
    tenant: row.tenant,
    createdAtMs: row.created_at_ms,
    revokedAtMs: row.revoked_at_ms,
    expiresAtMs: row.expires_at_ms,
    lastUsedAtMs: row.last_used_at_ms,
  };
}

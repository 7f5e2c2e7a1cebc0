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
import type { PostgresConnection } from './postgres-connection.js';

interface KeyRow {
  readonly key_id: string;
  readonly name: string;
  readonly role: string;
  readonly tenant: string;
  readonly created_at_ms: number;
  readonly revoked_at_ms: number | null;
  readonly expires_at_ms: number | null;
  readonly last_used_at_ms: number | null;
}

const COLUMNS = 'key_id, name, role, tenant, created_at_ms, revoked_at_ms, expires_at_ms, last_used_at_ms';

/**
 * The PostgreSQL adapter of {@link ApiKeyStore} (table `quotaplane_api_keys`), on the
 * store's pool; the same behaviour as the SQLite adapter. `createFirst` decides and inserts under
 * a transaction-scoped advisory lock, so servers starting together on one database create one
 * first key between them.
 */
export class PostgresApiKeyStore implements ApiKeyStore {
  readonly #db: PostgresConnection;
  readonly #s: string;
  readonly #schema: string;

  /** `s` is the quoted schema name, `schema` the plain one (it keys the first-key lock). */
  constructor(db: PostgresConnection, s: string, schema: string) {
    this.#db = db;
    this.#s = s;
    this.#schema = schema;
  }

  async create(key: NewApiKey): Promise<void> {
    const checked = requireNewApiKey(key);
    // Either unique column (id, hash) clashing inserts nothing; nothing inserted is the clash.
    const inserted = await this.#db.run(
      `INSERT INTO ${this.#s}.quotaplane_api_keys (key_id, key_hash, name, role, tenant, created_at_ms, revoked_at_ms, expires_at_ms)
       VALUES ($1, $2, $3, $4, $5, $6, NULL, $7) ON CONFLICT DO NOTHING`,
      values(checked),
    );
    if (inserted === 0) {
      throw new QuotaError('CONFLICT', `an API key with id '${checked.id}' or the same secret already exists; generate a new key`, {
        details: { id: checked.id },
      });
    }
  }

  async createFirst(key: NewApiKey): Promise<boolean> {
    const checked = requireNewApiKey(key);
    return this.#db.transaction(async (tx) => {
      // Seed 4: apart from the admission (0), rate (1), migration (2) and audit (3) locks.
      await tx.rows('SELECT pg_advisory_xact_lock(hashtextextended($1, 4))', [`quotaplane-first-key:${this.#schema}`]);
      const [row] = await tx.rows<{ present: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM ${this.#s}.quotaplane_api_keys) AS present`,
        [],
      );
      if (row?.present === true) return false;
      await tx.run(
        `INSERT INTO ${this.#s}.quotaplane_api_keys (key_id, key_hash, name, role, tenant, created_at_ms, revoked_at_ms, expires_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, $7)`,
        values(checked),
      );
      return true;
    });
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
    const row = await this.#db.row<KeyRow>(`SELECT ${COLUMNS} FROM ${this.#s}.quotaplane_api_keys WHERE key_hash = $1`, [hash]);
    return row === undefined ? null : decodeKey(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.rows<KeyRow>(`SELECT ${COLUMNS} FROM ${this.#s}.quotaplane_api_keys ORDER BY key_id`, []);
    return rows.map(decodeKey);
  }

  async revoke(id: string, atMs: number): Promise<RevokeOutcome> {
    if (typeof id !== 'string' || !isIdentifier(id)) throw invalidArgument('id', `must be a key id (key_<ULID>), got ${describe(id)}`);
    const instant = requireInstantMs('atMs', atMs);
    // The first revocation instant is kept: only a usable key is updated.
    const revoked = await this.#db.run(
      `UPDATE ${this.#s}.quotaplane_api_keys SET revoked_at_ms = $2 WHERE key_id = $1 AND revoked_at_ms IS NULL`,
      [id, instant],
    );
    if (revoked > 0) return 'revoked';
    const row = await this.#db.row(`SELECT 1 AS present FROM ${this.#s}.quotaplane_api_keys WHERE key_id = $1`, [id]);
    return row === undefined ? 'not-found' : 'already-revoked';
  }

  async expire(id: string, atMs: number): Promise<ExpireOutcome> {
    if (typeof id !== 'string' || !isIdentifier(id)) throw invalidArgument('id', `must be a key id (key_<ULID>), got ${describe(id)}`);
    const instant = requireInstantMs('atMs', atMs);
    // One statement: the key's state as found, and the expiry brought forward when it is usable.
    const row = await this.#db.row<{ revoked: boolean }>(
      `WITH found AS (SELECT key_id, revoked_at_ms FROM ${this.#s}.quotaplane_api_keys WHERE key_id = $1),
            moved AS (UPDATE ${this.#s}.quotaplane_api_keys SET expires_at_ms = $2
                      WHERE key_id = $1 AND revoked_at_ms IS NULL AND (expires_at_ms IS NULL OR expires_at_ms > $2) RETURNING key_id)
       SELECT revoked_at_ms IS NOT NULL AS revoked FROM found`,
      [id, instant],
    );
    if (row === undefined) return 'not-found';
    return row.revoked ? 'revoked' : 'expiring';
  }

  async createSession(session: NewKeySession): Promise<void> {
    const checked = requireNewKeySession(session);
    // Sessions that ended go when a new one is made, in the same statement.
    await this.#db.run(
      `WITH ended AS (DELETE FROM ${this.#s}.quotaplane_key_sessions WHERE expires_at_ms <= $3)
       INSERT INTO ${this.#s}.quotaplane_key_sessions (session_hash, key_id, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, $4)`,
      [checked.hash, checked.keyId, checked.createdAtMs, checked.expiresAtMs],
    );
  }

  async findSession(hash: string, nowMs: number): Promise<ApiKeyRecord | null> {
    if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
    const instant = requireInstantMs('nowMs', nowMs);
    const columns = COLUMNS.split(', ').map((column) => `k.${column}`).join(', ');
    const row = await this.#db.row<KeyRow>(
      `SELECT ${columns} FROM ${this.#s}.quotaplane_key_sessions s JOIN ${this.#s}.quotaplane_api_keys k ON k.key_id = s.key_id
       WHERE s.session_hash = $1 AND s.expires_at_ms > $2`,
      [hash, instant],
    );
    return row === undefined ? null : decodeKey(row);
  }

  async endSession(hash: string): Promise<boolean> {
    if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
    return (await this.#db.run(`DELETE FROM ${this.#s}.quotaplane_key_sessions WHERE session_hash = $1`, [hash])) > 0;
  }

  async recordUse(uses: readonly KeyUse[]): Promise<void> {
    const checked = requireKeyUses(uses);
    if (checked.length === 0) return;
    // One statement for the batch; an instant only moves forward.
    await this.#db.run(
      `UPDATE ${this.#s}.quotaplane_api_keys AS k SET last_used_at_ms = u.at_ms
       FROM (SELECT id, max(at_ms) AS at_ms FROM unnest($1::text[], $2::bigint[]) AS x(id, at_ms) GROUP BY id) AS u
       WHERE k.key_id = u.id AND (k.last_used_at_ms IS NULL OR k.last_used_at_ms < u.at_ms)`,
      [checked.map((use) => use.id), checked.map((use) => use.atMs)],
    );
  }
}

function values(key: NewApiKey): unknown[] {
  return [key.id, key.hash, key.name, key.role, key.tenant, key.createdAtMs, key.expiresAtMs ?? null];
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
    throw new QuotaError('STORE_CORRUPT', `the PostgreSQL store holds an unreadable API key row '${row.key_id}'`, {
      details: { backend: 'postgres', id: row.key_id },
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

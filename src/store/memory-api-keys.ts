import { describe } from '../core/amounts.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
import { isIdentifier } from '../core/identifiers.js';
import {
  isApiKeyHash,
  requireKeyUses,
  requireNewApiKey,
  requireNewKeySession,
  type ExpireOutcome,
  type NewKeySession,
  type ApiKeyRecord,
  type ApiKeyStore,
  type NewApiKey,
  type RevokeOutcome,
} from './api-keys.js';
import { requireInstantMs } from '../core/instant.js';

/**
 * An {@link ApiKeyStore} held in this process's memory: same validation and answers as the SQLite
 * one, nothing durable. For tests, benchmarks, and an embedder serving a store whose backend keeps
 * no keys yet (PostgreSQL, until its adapter has them); keys vanish with the process.
 */
export function createMemoryApiKeyStore(): ApiKeyStore {
  const byId = new Map<string, ApiKeyRecord & { readonly hash: string }>();
  const insert = (key: NewApiKey) => byId.set(key.id, { ...key, expiresAtMs: key.expiresAtMs ?? null, revokedAtMs: null, lastUsedAtMs: null });
  const sessions = new Map<string, NewKeySession>();
  const record = ({ hash: _hash, ...rest }: ApiKeyRecord & { readonly hash: string }): ApiKeyRecord => ({ ...rest });
  return {
    async create(key) {
      const checked = requireNewApiKey(key);
      if (byId.has(checked.id) || [...byId.values()].some((stored) => stored.hash === checked.hash)) {
        throw new QuotaError('CONFLICT', `an API key with id '${checked.id}' or the same secret already exists; generate a new key`, {
          details: { id: checked.id },
        });
      }
      insert(checked);
    },
    async createFirst(key) {
      const checked = requireNewApiKey(key);
      if (byId.size > 0) return false;
      insert(checked);
      return true;
    },
    async findByHash(hash) {
      if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
      const found = [...byId.values()].find((stored) => stored.hash === hash);
      return found === undefined ? null : record(found);
    },
    async list() {
      return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(record);
    },
    async revoke(id, atMs): Promise<RevokeOutcome> {
      if (typeof id !== 'string' || !isIdentifier(id)) throw invalidArgument('id', `must be a key id (key_<ULID>), got ${describe(id)}`);
      const instant = requireInstantMs('atMs', atMs);
      const stored = byId.get(id);
      if (stored === undefined) return 'not-found';
      if (stored.revokedAtMs !== null) return 'already-revoked';
      byId.set(id, { ...stored, revokedAtMs: instant });
      return 'revoked';
    },
    async expire(id, atMs): Promise<ExpireOutcome> {
      if (typeof id !== 'string' || !isIdentifier(id)) throw invalidArgument('id', `must be a key id (key_<ULID>), got ${describe(id)}`);
      const instant = requireInstantMs('atMs', atMs);
      const stored = byId.get(id);
      if (stored === undefined) return 'not-found';
      if (stored.revokedAtMs !== null) return 'revoked';
      if (stored.expiresAtMs === null || stored.expiresAtMs > instant) byId.set(id, { ...stored, expiresAtMs: instant });
      return 'expiring';
    },
    async createSession(session) {
      const checked = requireNewKeySession(session);
      for (const [hash, stored] of sessions) if (stored.expiresAtMs <= checked.createdAtMs) sessions.delete(hash);
      sessions.set(checked.hash, checked);
    },
    async findSession(hash, nowMs) {
      if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
      const session = sessions.get(hash);
      if (session === undefined || session.expiresAtMs <= requireInstantMs('nowMs', nowMs)) return null;
      const key = byId.get(session.keyId);
      return key === undefined ? null : record(key);
    },
    async endSession(hash) {
      if (!isApiKeyHash(hash)) throw invalidArgument('hash', `must be 64 lowercase hex digits, got ${describe(hash)}`);
      return sessions.delete(hash);
    },
    async recordUse(uses) {
      for (const use of requireKeyUses(uses)) {
        const stored = byId.get(use.id);
        if (stored !== undefined && (stored.lastUsedAtMs === null || stored.lastUsedAtMs < use.atMs)) byId.set(use.id, { ...stored, lastUsedAtMs: use.atMs });
      }
    },
  };
}

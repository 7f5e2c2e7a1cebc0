import { createHash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';

import type { ApiKeyRole, NewApiKey } from '../store/api-keys.js';

/** What every key secret starts with, so a leaked one is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = 'qp_';

/** Random bytes in a key secret: 32 (256 bits): at least 32 bytes. */
export const API_KEY_SECRET_BYTES = 32;

/**
 * The SHA-256 of a key secret as 64 lowercase hex digits: what the store keeps and looks keys up
 * by. A fast hash is enough here (unlike for passwords): the secret is 256 random bits, so there
 * is nothing to guess from the hash by brute force.
 */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new key's secret, `qp_` + 32 random bytes in base64url (43 characters). Shown once, never stored. */
export function generateApiKeySecret(): string {
  return `${API_KEY_PREFIX}${randomBytes(API_KEY_SECRET_BYTES).toString('base64url')}`;
}

/** What {@link mintApiKey} makes: the secret to show once, and the record to store (with only its hash). */
export interface MintedApiKey {
  readonly secret: string;
  readonly key: NewApiKey;
}

/**
 * Makes a new key: a fresh secret, its hash, and the id `key_<ULID>` (time part `atMs`, so ids
 * sort by creation). `name` defaults to the id. The record is validated when stored
 * (`ApiKeyStore.create`), which refuses a runner key for every tenant.
 */
export function mintApiKey(options: { role: ApiKeyRole; tenant: string; name?: string | undefined; atMs: number }): MintedApiKey {
  const id = `key_${ulid(Math.max(options.atMs, 1))}`;
  const secret = generateApiKeySecret();
  return {
    secret,
    key: {
      id,
      name: options.name ?? id,
      role: options.role,
      tenant: options.tenant,
      createdAtMs: options.atMs,
      hash: hashApiKey(secret),
    },
  };
}

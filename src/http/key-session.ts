import { randomBytes } from 'node:crypto';

import type { ApiKeyRecord, ApiKeyStore } from '../store/api-keys.js';
import { hashApiKey } from './api-key-secret.js';
import { HttpProblem } from './errors.js';

/**
 * Dashboard sessions (docs/guides/operating.md#the-operator-dashboard): the dashboard sends its
 * operator key once, to `POST /v1/session`, and gets a cookie instead, so the key need not stay in
 * the tab. The cookie holds a random token; the store keeps only its SHA-256, beside the keys, so
 * signing out (`DELETE /v1/session`) ends the session for every server on the store. A session acts
 * as its key, and ends with it (revoked, expired) or after {@link SESSION_TTL_MS}.
 */

/** The session cookie's name. */
export const SESSION_COOKIE = 'qp_session';

/** How long a session lasts from sign-in: two hours, then the dashboard asks for the key again. */
export const SESSION_TTL_MS = 2 * 3_600_000;

/** The path the cookie is sent on: the API only, not the dashboard's files. */
export const SESSION_COOKIE_PATH = '/v1';

/**
 * The header every state-changing request authenticated by the session cookie must send (value
 * `1`). A page on another site cannot send it without a CORS preflight this server never answers,
 * so with `SameSite=Strict` a forged request is refused twice over.
 */
export const CSRF_HEADER = 'x-quotaplane-csrf';

const TOKEN_PREFIX = 'qps_';
const TOKEN_SHAPE = /^qps_[A-Za-z0-9_-]{43}$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A new session token (`qps_` + 32 random bytes, base64url) and the hash the store keeps. */
export function newSessionToken(): { token: string; hash: string } {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashApiKey(token) };
}

/** The session token in a `Cookie` header, or `null` when it has none shaped like one. */
export function sessionTokenOf(cookieHeader: string | undefined): string | null {
  if (cookieHeader === undefined) return null;
  for (const part of cookieHeader.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(at + 1).trim();
    if (TOKEN_SHAPE.test(value)) return value;
  }
  return null;
}

/** The `Set-Cookie` value of a session: HttpOnly, SameSite=Strict, scoped to `/v1`, Secure over TLS. */
export function sessionCookie(token: string, maxAgeMs: number, secure: boolean): string {
  const parts = [`${SESSION_COOKIE}=${token}`, `Path=${SESSION_COOKIE_PATH}`, `Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`, 'HttpOnly', 'SameSite=Strict'];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** The `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}

/**
 * The key behind a session token: refused with 401 when the session is unknown or over, and when
 * `method` changes state without the {@link CSRF_HEADER} header. The key's own state (revoked,
 * expired) is the caller's to check, as for a bearer key.
 */
export async function sessionKey(token: string, keys: ApiKeyStore, nowMs: number, method: string, csrf: string | string[] | undefined): Promise<ApiKeyRecord> {
  if (!SAFE_METHODS.has(method) && csrf !== '1') {
    throw new HttpProblem('UNAUTHENTICATED', `a ${method} authenticated by the dashboard session cookie must send the header '${CSRF_HEADER}: 1'; API clients send 'Authorization: Bearer <key>'`);
  }
  const key = await keys.findSession(hashApiKey(token), nowMs);
  if (key === null) throw new HttpProblem('UNAUTHENTICATED', 'the dashboard session ended (signed out, or over after two hours); sign in again with an operator key');
  return key;
}

/**
 * The dashboard's only way to the server: the same /v1 HTTP API every client uses. The operator
 * key goes in the Authorization header of the sign-in requests only (GET /v1/key, POST
 * /v1/session), never in a URL or a log, and is not kept: every later request is authenticated by
 * the HttpOnly session cookie the server set, which this script cannot read, and sends the
 * x-quotaplane-csrf header the server requires of a state change made on the cookie.
 */

/** Where /v1 is: one level above the page (the page is served at /ui/). */
const API_BASE = new URL('../', document.baseURI);

/** A failed call: `code` is the problem's code (or `UNREACHABLE`), `status` the HTTP status (0 when unreachable). */
export class ApiError extends Error {
  constructor(code, status, message, field, problem) {
    super(message);
    this.code = code;
    this.status = status;
    this.field = field;
    this.problem = problem;
  }
}

/** Encodes one path segment (a tenant, a run). */
export const seg = (value) => encodeURIComponent(value);

/**
 * An API client: bound to one key (`key`, for signing in), or to the session cookie (no key), when
 * `onSessionEnded` is called on a 401 (signed out in another tab, over after two hours, key revoked).
 */
export function createApi(key, onSessionEnded) {
  async function call(method, path, body, contentType = 'application/json') {
    const headers = { accept: 'application/json, application/problem+json' };
    if (key === undefined) headers['x-quotaplane-csrf'] = '1';
    else headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = contentType;
    let response;
    try {
      response = await fetch(new URL(path, API_BASE), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        // The session cookie is sent, and set, on same-origin requests only.
        credentials: 'same-origin',
        referrerPolicy: 'no-referrer',
      });
    } catch {
      throw new ApiError('UNREACHABLE', 0, 'The quotaplane server could not be reached. Is it running? Nothing is known to have changed.');
    }
    const text = await response.text();
    let parsed;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return parsed;
    if (response.status === 401 && key === undefined) onSessionEnded?.(typeof parsed?.detail === 'string' ? parsed.detail : null);
    const detail = typeof parsed?.detail === 'string' ? parsed.detail : `the server answered HTTP ${response.status}`;
    throw new ApiError(typeof parsed?.code === 'string' ? parsed.code : `HTTP_${response.status}`, response.status, detail, parsed?.field, parsed);
  }
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body ?? {}),
    put: (path, body) => call('PUT', path, body),
    // A JSON Merge Patch (RFC 7396): members left out are kept, null removes one.
    patch: (path, body) => call('PATCH', path, body, 'application/merge-patch+json'),
    delete: (path) => call('DELETE', path),
  };
}

/** The dashboard's settings from the server: currency, minor units per unit, refresh period in ms. */
export async function loadConfig() {
  try {
    const response = await fetch(new URL('config.json', document.baseURI), { cache: 'no-store' });
    if (response.ok) return await response.json();
  } catch {
    // fall through to the defaults the server would give
  }
  return { currency: 'USD', minorUnitsPerUnit: 1_000_000, refreshMs: 5000 };
}

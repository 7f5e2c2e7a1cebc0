import { createApi } from './api.js';

/**
 * Signing in and out. The operator key is sent twice at sign-in (GET /v1/key to say what kind of
 * key it is, POST /v1/session to exchange it for a session cookie) and then dropped: nothing keeps
 * it, not sessionStorage, not localStorage, not a variable. The HttpOnly cookie (two hours) stands
 * for it; signing out ends the session on the server, for every server on the store.
 */

function refusal(error) {
  if (error.status === 401 && /expired/.test(error.message)) return `This key has expired: ${error.message}`;
  if (error.status === 401) return 'This key is not accepted: it is unknown or was revoked. Check that you pasted the whole key (it starts with qp_), or ask for a new operator key.';
  return error.message;
}

/**
 * Checks `key` with GET /v1/key and, for an operator key, starts a session with it. Resolves
 * `{ ok: true, who }`, or `{ ok: false, message }` saying why it cannot be used here.
 */
export async function startSession(key) {
  const api = createApi(key);
  try {
    const who = await api.get('v1/key');
    if (who.role !== 'operator') {
      return {
        ok: false,
        message: `This is a runner key ('${who.name}', tenant '${who.tenant}'). Runner keys admit and settle runs; the dashboard needs an operator key. Make one with: quotaplane keys create --role operator --tenant ${who.tenant} --name <your name>`,
      };
    }
    return { ok: true, who: await api.post('v1/session') };
  } catch (error) {
    return { ok: false, message: refusal(error) };
  }
}

/** The session this browser already has (its cookie): `{ ok: true, who }`, or `{ ok: false, message }` (`message` null when there was none). */
export async function resumeSession() {
  try {
    return { ok: true, who: await createApi().get('v1/key') };
  } catch (error) {
    return { ok: false, message: error.status === 401 ? null : error.message };
  }
}

/** Ends the session on the server. Resolves `null`, or a message when the server could not be told. */
export async function endSession() {
  try {
    await createApi().delete('v1/session');
    return null;
  } catch (error) {
    return error.status === 401 ? null : error.message;
  }
}

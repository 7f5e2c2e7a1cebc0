/**
 * The operator key for this browser tab only. It lives in sessionStorage, which
 * the browser keeps per tab and forgets when the tab closes; it is never put in a URL, a cookie or
 * a log. Signing out removes it.
 */
const STORAGE_KEY = 'quotaplane.operatorKey';

export function storedKey() {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeKey(key) {
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (private mode): the key stays in memory for this page only.
  }
}

export function forgetKey() {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
}

/**
 * Checks a key with GET /v1/key. Resolves `{ ok: true, who }` for an operator key, or
 * `{ ok: false, message }` saying why it cannot be used here.
 */
export async function checkKey(api) {
  try {
    const who = await api.get('v1/key');
    if (who.role !== 'operator') {
      return {
        ok: false,
        message: `This is a runner key ('${who.name}', tenant '${who.tenant}'). Runner keys admit and settle runs; the dashboard needs an operator key. Make one with: quotaplane keys create --role operator --tenant ${who.tenant} --name <your name>`,
      };
    }
    return { ok: true, who };
  } catch (error) {
    if (error.status === 401) return { ok: false, message: 'This key is not accepted: it is unknown or was revoked. Check that you pasted the whole key (it starts with qp_), or ask for a new operator key.' };
    return { ok: false, message: error.message };
  }
}

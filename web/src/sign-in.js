import { useRef, useState } from 'preact/hooks';

import { createApi } from './api.js';
import { html } from './html.js';
import { checkKey } from './session.js';

/**
 * Sign-in with an operator key. The key is checked with GET /v1/key: an unknown
 * or revoked key and a runner key are refused here with a message saying what to do.
 */
export function SignIn({ notice, onSignedIn }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const input = useRef(null);

  const submit = async (event) => {
    event.preventDefault();
    const key = input.current.value.trim();
    if (key === '') {
      setError('Paste an operator key (it starts with qp_).');
      input.current.focus();
      return;
    }
    setBusy(true);
    setError(null);
    const result = await checkKey(createApi(key));
    setBusy(false);
    if (result.ok) {
      input.current.value = '';
      onSignedIn(key, result.who);
    } else {
      setError(result.message);
      input.current.focus();
    }
  };

  return html`<main class="page sign-in">
    <h1 tabindex="-1">quotaplane operator dashboard</h1>
    ${notice === null ? null : html`<p class="notice" role="status">${notice}</p>`}
    <form onSubmit=${submit} novalidate>
      <label for="operator-key">Operator key</label>
      <input
        id="operator-key"
        ref=${input}
        type="password"
        autocomplete="off"
        spellcheck="false"
        autocapitalize="off"
        aria-describedby="operator-key-help${error === null ? '' : ' operator-key-error'}"
        aria-invalid=${error === null ? undefined : 'true'}
      />
      <p id="operator-key-help" class="help">
        An operator key from <code>quotaplane keys create --role operator</code>. This tab keeps it until you sign out or
        close the tab; it is sent only in the Authorization header of API requests.
      </p>
      ${error === null ? null : html`<p id="operator-key-error" class="error" role="alert">${error}</p>`}
      <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Sign in'}</button>
    </form>
  </main>`;
}

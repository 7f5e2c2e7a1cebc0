import { useRef, useState } from 'preact/hooks';

import { html } from './html.js';
import { startSession } from './session.js';

/**
 * Sign-in with an operator key. The key is checked with GET /v1/key: an unknown, revoked or
 * expired key and a runner key are refused here with a message saying what to do; an operator key
 * is exchanged for a session cookie and the field is cleared. A notice (such as "Signed out")
 * goes once the next attempt starts, so it never stands above that attempt's error.
 */
export function SignIn({ notice, onSignedIn }) {
  const [error, setError] = useState(null);
  const [noticeShown, setNoticeShown] = useState(true);
  const [busy, setBusy] = useState(false);
  const input = useRef(null);

  const submit = async (event) => {
    event.preventDefault();
    const key = input.current.value.trim();
    if (key === '') {
      setNoticeShown(false);
      setError('Paste an operator key (it starts with qp_).');
      input.current.focus();
      return;
    }
    setNoticeShown(false);
    setBusy(true);
    setError(null);
    const result = await startSession(key);
    setBusy(false);
    if (result.ok) {
      input.current.value = '';
      onSignedIn(result.who);
    } else {
      setError(result.message);
      input.current.focus();
    }
  };

  return html`<main class="page sign-in">
    <h1 tabindex="-1">quotaplane operator dashboard</h1>
    ${notice === null || !noticeShown ? null : html`<p class="notice" role="status">${notice}</p>`}
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
        An operator key from <code>quotaplane keys create --role operator</code>. It is sent once, in the Authorization
        header, for a session of two hours kept in a cookie this page cannot read; the key itself is not kept.
      </p>
      ${error === null ? null : html`<p id="operator-key-error" class="error" role="alert">${error}</p>`}
      <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Sign in'}</button>
    </form>
  </main>`;
}

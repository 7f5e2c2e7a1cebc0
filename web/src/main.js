import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { createApi, loadConfig } from './api.js';
import { moneyFormat } from './format.js';
import { html } from './html.js';
import { Overview } from './overview.js';
import { KeysPage } from './keys-page.js';
import { endSession, resumeSession } from './session.js';
import { SignIn } from './sign-in.js';
import { TenantPage } from './tenant-page.js';

// Which page the location's hash names: `#/` the overview, `#/tenant/<tenant>` one tenant,
// `#/keys` the API keys. The hash never holds the key.
function currentRoute() {
  if (location.hash === '#/keys') return { page: 'keys' };
  const match = /^#\/tenant\/(.+)$/.exec(location.hash);
  if (match === null) return { page: 'overview' };
  try {
    return { page: 'tenant', tenant: decodeURIComponent(match[1]) };
  } catch {
    return { page: 'overview' };
  }
}

function useRoute() {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onChange = () => setRoute(currentRoute());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function scopeText(who) {
  return who.tenant === '*' ? 'operator of every tenant' : `operator of tenant '${who.tenant}'`;
}

function App({ config }) {
  const [session, setSession] = useState(null);
  const [restoring, setRestoring] = useState(true);
  const [notice, setNotice] = useState(null);
  const route = useRoute();
  const main = useRef(null);
  const money = useMemo(() => moneyFormat(config), [config]);

  // A session that ends while in use (signed out elsewhere, over, its key revoked) leads back to
  // sign-in. Not one this tab is signing out of: its requests still in flight are refused too, and
  // their 401s must not put "The session ended" over "Signed out".
  const sessionApi = () => {
    const state = { signingOut: false };
    const api = createApi(undefined, (detail) => {
      if (state.signingOut) return;
      setSession(null);
      setNotice(`The session ended${detail === null ? '' : ` (${detail})`}. Sign in again.`);
    });
    return { ...api, state };
  };

  // A session this browser already has (its cookie) is asked about before anything is shown.
  useEffect(() => {
    resumeSession().then((result) => {
      if (result.ok && result.who.role === 'operator') setSession({ api: sessionApi(), who: result.who });
      else if (!result.ok && result.message !== null) setNotice(result.message);
      setRestoring(false);
    });
  }, []);

  // Moving between pages moves focus to the page's heading, as a page load would.
  useEffect(() => {
    main.current?.querySelector('h1')?.focus();
  }, [route.page, route.tenant, session]);

  const signIn = (who) => {
    setNotice(null);
    setSession({ api: sessionApi(), who });
  };
  const signOut = async () => {
    if (session !== null) session.api.state.signingOut = true;
    const failed = await endSession();
    setSession(null);
    setNotice(failed === null ? 'Signed out. The session was ended on the server.' : `Signed out here, but the server could not be told (${failed}); the session ends by itself within two hours.`);
    if (location.hash !== '') history.replaceState(null, '', location.pathname);
  };

  if (restoring) return html`<main class="page"><p role="status">Checking for a session…</p></main>`;
  if (session === null) return html`<${SignIn} notice=${notice} onSignedIn=${signIn} />`;

  const { who, api } = session;
  // An operator key of one tenant sees that tenant only: the overview lists just it.
  const tenantAllowed = route.page !== 'tenant' || who.tenant === '*' || who.tenant === route.tenant;
  return html`
    <a class="skip" href="#main" onClick=${(event) => {
      event.preventDefault();
      main.current?.querySelector('h1')?.focus();
    }}>Skip to content</a>
    <header class="topbar">
      <a class="brand" href="#/">quotaplane</a>
      <nav aria-label="Pages">
        <a href="#/" aria-current=${route.page === 'overview' ? 'page' : undefined}>All tenants</a>
        ${who.tenant === '*' ? html` <a href="#/keys" aria-current=${route.page === 'keys' ? 'page' : undefined}>API keys</a>` : null}
      </nav>
      <p class="who">Signed in as <strong>${who.name}</strong> <span class="muted">(${scopeText(who)})</span></p>
      <button type="button" class="secondary" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" class="page" ref=${main}>
      ${route.page === 'keys'
        ? who.tenant === '*'
          ? html`<${KeysPage} api=${api} />`
          : html`<h1 tabindex="-1">Not available</h1><p>API keys are managed with an operator key of every tenant. <a href="#/">Back</a>.</p>`
        : route.page === 'tenant' && tenantAllowed
        ? html`<${TenantPage} key=${route.tenant} tenant=${route.tenant} api=${api} config=${config} money=${money} />`
        : route.page === 'tenant'
          ? html`<h1 tabindex="-1">Not available</h1><p>This key covers tenant '${who.tenant}' only. <a href="#/">Back to it</a>.</p>`
          : html`<${Overview} api=${api} who=${who} config=${config} money=${money} />`}
    </main>
  `;
}

const config = await loadConfig();
const root = document.getElementById('app');
root.textContent = ''; // the "Loading…" line the page shows before the script runs
render(html`<${App} config=${config} />`, root);

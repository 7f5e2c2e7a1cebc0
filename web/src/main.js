import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { createApi, loadConfig } from './api.js';
import { moneyFormat } from './format.js';
import { html } from './html.js';
import { Overview } from './overview.js';
import { checkKey, forgetKey, storedKey, storeKey } from './session.js';
import { SignIn } from './sign-in.js';
import { TenantPage } from './tenant-page.js';

// Which page the location's hash names: `#/` the overview, `#/tenant/<tenant>` one tenant. The
// hash never holds the key.
function currentRoute() {
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
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [notice, setNotice] = useState(null);
  const route = useRoute();
  const main = useRef(null);
  const money = useMemo(() => moneyFormat(config), [config]);

  // A key kept from earlier in this tab is checked again before anything is shown with it.
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    const api = createApi(key);
    checkKey(api).then((result) => {
      if (result.ok) setSession({ api, who: result.who });
      else {
        forgetKey();
        setNotice(result.message);
      }
      setRestoring(false);
    });
  }, []);

  // Moving between pages moves focus to the page's heading, as a page load would.
  useEffect(() => {
    main.current?.querySelector('h1')?.focus();
  }, [route.page, route.tenant, session]);

  const signIn = (key, who) => {
    storeKey(key);
    setNotice(null);
    setSession({ api: createApi(key), who });
  };
  const signOut = () => {
    forgetKey();
    setSession(null);
    setNotice('Signed out. The key was forgotten by this tab.');
    if (location.hash !== '') history.replaceState(null, '', location.pathname);
  };

  if (restoring) return html`<main class="page"><p role="status">Checking the key kept by this tab…</p></main>`;
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
      <nav aria-label="Pages"><a href="#/" aria-current=${route.page === 'overview' ? 'page' : undefined}>All tenants</a></nav>
      <p class="who">Signed in as <strong>${who.name}</strong> <span class="muted">(${scopeText(who)})</span></p>
      <button type="button" class="secondary" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" class="page" ref=${main}>
      ${route.page === 'tenant' && tenantAllowed
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

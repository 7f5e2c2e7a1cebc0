import { useEffect, useState } from 'preact/hooks';

import { seg } from './api.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { utc } from './format.js';
import { html } from './html.js';

// Expiries and overlaps offered, in ms; the CLI and the API take any (keys create --expires-in).
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const EXPIRIES = [
  ['never', null],
  ['1 day', DAY],
  ['7 days', 7 * DAY],
  ['30 days', 30 * DAY],
  ['90 days', 90 * DAY],
];
const OVERLAPS = [
  ['end it now', 0],
  ['1 hour', HOUR],
  ['1 day', DAY],
  ['7 days', 7 * DAY],
];

const when = (ms) => (ms === null ? '—' : utc(ms));

function stateOf(key, nowMs) {
  if (key.revokedAtMs !== null) return 'revoked';
  if (key.expiresAtMs !== null && key.expiresAtMs <= nowMs) return 'expired';
  return 'usable';
}

/** The secret of a key just made or rotated, shown this once. */
function Secret({ made, onDone }) {
  return html`<section class="secret" aria-labelledby="secret-title">
    <h2 id="secret-title" tabindex="-1">Key ${made.name} (${made.id})</h2>
    <p>This is the only time the key is shown: store it now. Only its hash is kept.</p>
    <p><code class="secret-value" data-testid="new-key">${made.key}</code></p>
    <button type="button" class="secondary" onClick=${onDone}>I stored it</button>
  </section>`;
}

function CreateForm({ api, onMade }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const expiresIn = form.get('expiresIn');
    const body = { tenant: String(form.get('tenant')).trim(), role: String(form.get('role')) };
    const name = String(form.get('name')).trim();
    if (name !== '') body.name = name;
    if (expiresIn !== 'never') body.expiresInMs = Number(expiresIn);
    setBusy(true);
    setError(null);
    try {
      const newTenant = body.tenant !== '*' && form.get('newTenant') === 'on' ? '?newTenant=true' : '';
      onMade(await api.post(`v1/keys${newTenant}`, body));
      element.reset();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="create-key" onSubmit=${submit} aria-labelledby="create-key-title">
    <h2 id="create-key-title">Create a key</h2>
    <label for="key-name">Name</label>
    <input id="key-name" name="name" autocomplete="off" placeholder="default: its id" />
    <label for="key-role">Role</label>
    <select id="key-role" name="role">
      <option value="runner">runner</option>
      <option value="operator">operator</option>
    </select>
    <label for="key-tenant">Tenant</label>
    <input id="key-tenant" name="tenant" required autocomplete="off" placeholder="a tenant, or * for every tenant (operator keys)" />
    <label><input type="checkbox" name="newTenant" /> The tenant is new (it has no quota and no history yet)</label>
    <label for="key-expires">Expires</label>
    <select id="key-expires" name="expiresIn">
      ${EXPIRIES.map(([label, ms]) => html`<option value=${ms === null ? 'never' : String(ms)}>${label === 'never' ? 'never' : `in ${label}`}</option>`)}
    </select>
    ${error === null ? null : html`<p class="error" role="alert">${error.field ? html`<strong>${error.field}</strong>: ` : null}${error.message}</p>`}
    <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create key'}</button>
  </form>`;
}

/**
 * The API keys page (operators of every tenant; the routes decide): every key with its role,
 * tenant, creation, expiry and last use (coarse: a server records it at most once a minute), a
 * form to create one with an expiry (its secret shown once), and revoke and rotate behind a
 * confirmation. Every act is one /v1 call, audited under the signed-in key's name.
 */
export function KeysPage({ api }) {
  const [keys, setKeys] = useState(null);
  const [error, setError] = useState(null);
  const [made, setMade] = useState(null);
  const [acting, setActing] = useState(null);
  const [overlap, setOverlap] = useState(String(HOUR));

  const load = async () => {
    try {
      setKeys((await api.get('v1/keys')).keys);
      setError(null);
    } catch (failure) {
      setError(failure.message);
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const nowMs = Date.now();
  const rows = keys ?? [];
  return html`
    <h1 tabindex="-1">API keys</h1>
    <p class="help">Last used is coarse: each server records a key's use at most once a minute.</p>
    ${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
    ${made === null ? null : html`<${Secret} made=${made} onDone=${() => setMade(null)} />`}
    <${CreateForm} api=${api} onMade=${(key) => {
      setMade(key);
      void load();
    }} />
    ${keys === null
      ? html`<p role="status">Reading the keys…</p>`
      : html`<table class="keys">
          <caption>Every key, revoked and expired ones included; never a secret</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Tenant</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            ${rows.map((key) => {
              const state = stateOf(key, nowMs);
              return html`<tr key=${key.id} data-key-id=${key.id}>
                <th scope="row">${key.name}</th>
                <td data-label="Role">${key.role}</td>
                <td data-label="Tenant">${key.tenant === '*' ? 'every tenant' : key.tenant}</td>
                <td data-label="Created">${when(key.createdAtMs)}</td>
                <td data-label="Expires">${when(key.expiresAtMs)}</td>
                <td data-label="Last used">${key.lastUsedAtMs === null ? 'not yet' : utc(key.lastUsedAtMs)}</td>
                <td data-label="State">${state}</td>
                <td data-label="Actions">
                  ${state === 'usable'
                    ? html`<button type="button" class="secondary" aria-label=${`Rotate ${key.name}`} onClick=${() => setActing({ kind: 'rotate', key })}>Rotate</button>
                        <button type="button" class="danger" aria-label=${`Revoke ${key.name}`} onClick=${() => setActing({ kind: 'revoke', key })}>Revoke</button>`
                    : null}
                </td>
              </tr>`;
            })}
          </tbody>
        </table>`}
    ${acting?.kind === 'revoke'
      ? html`<${ConfirmDialog}
          title=${`Revoke ${acting.key.name}?`}
          confirmLabel="Revoke key"
          danger=${true}
          onConfirm=${() => api.post(`v1/keys/${seg(acting.key.id)}/revoke`)}
          onClose=${() => {
            setActing(null);
            void load();
          }}
        ><p>Every request with key ${acting.key.id} is refused from now on, including a dashboard signed in with it.</p></${ConfirmDialog}>`
      : null}
    ${acting?.kind === 'rotate'
      ? html`<${ConfirmDialog}
          title=${`Rotate ${acting.key.name}?`}
          confirmLabel="Rotate key"
          onConfirm=${async () => {
            const rotated = await api.post(`v1/keys/${seg(acting.key.id)}/rotate`, { overlapMs: Number(overlap) });
            setMade(rotated.created);
          }}
          onClose=${() => {
            setActing(null);
            void load();
          }}
        >
          <p>A new key with the same name, role and tenant is made and shown once. The old key keeps working for the overlap, then expires.</p>
          <label for="rotate-overlap">Old key keeps working</label>
          <select id="rotate-overlap" value=${overlap} onChange=${(event) => setOverlap(event.currentTarget.value)}>
            ${OVERLAPS.map(([label, ms]) => html`<option value=${String(ms)}>${label === 'end it now' ? label : `for ${label}`}</option>`)}
          </select>
        </${ConfirmDialog}>`
      : null}
  `;
}

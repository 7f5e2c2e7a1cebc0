import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { SESSION_TTL_MS } from '../../src/http/key-session.js';
import { bearer, expectProblem, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// Dashboard sessions: a bearer key exchanged for a cookie, kept server-side so signing out ends it.

let fixture: ServiceFixture;
beforeEach(async () => {
  fixture = await serviceFixture();
});
afterEach(async () => fixture.close());

async function signIn(key = fixture.key.opAll.secret): Promise<{ cookie: string; setCookie: string }> {
  const answer = await fixture.app.inject({ method: 'POST', url: '/v1/session', headers: bearer(key) });
  expect(answer.statusCode, answer.body).toBe(200);
  const setCookie = String(answer.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0] ?? '', setCookie };
}

describe('dashboard sessions', () => {
  it('POST /v1/session sets an HttpOnly, SameSite=Strict cookie scoped to /v1 that stands for the key on reads', async () => {
    const answer = await fixture.app.inject({ method: 'POST', url: '/v1/session', headers: bearer(fixture.key.opAll) });
    expect(answer.json()).toEqual({ id: fixture.key.opAll.record.id, name: 'ops-all', role: 'operator', tenant: '*', expiresAtMs: T0 + SESSION_TTL_MS });
    const setCookie = String(answer.headers['set-cookie']);
    expect(setCookie).toMatch(/^qp_session=qps_[A-Za-z0-9_-]{43}; Path=\/v1; Max-Age=7200; HttpOnly; SameSite=Strict$/);
    expect(setCookie).not.toContain(fixture.key.opAll.secret);
    const cookie = setCookie.split(';')[0] ?? '';
    const who = await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: { cookie } });
    expect(who.json()).toMatchObject({ name: 'ops-all', role: 'operator' });
    expect((await fixture.app.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie } })).statusCode).toBe(200);
  });

  it('is Secure when the page came over TLS (a TLS proxy in front: the browser sends an https Origin), not over plain HTTP', async () => {
    const behindTls = await fixture.app.inject({ method: 'POST', url: '/v1/session', headers: { ...bearer(fixture.key.opAll), origin: 'https://quota.example' } });
    expect(String(behindTls.headers['set-cookie'])).toMatch(/; Secure$/);
    const plain = await fixture.app.inject({ method: 'POST', url: '/v1/session', headers: { ...bearer(fixture.key.opAll), origin: 'http://127.0.0.1:7070' } });
    expect(String(plain.headers['set-cookie'])).not.toContain('Secure');
  });

  it('a runner key cannot start a session (404, as on any operator route), nor can a session start another', async () => {
    expectProblem(await fixture.app.inject({ method: 'POST', url: '/v1/session', headers: bearer(fixture.key.runAcme) }), 404, 'NOT_FOUND');
    const { cookie } = await signIn();
    expectProblem(await fixture.app.inject({ method: 'POST', url: '/v1/session', headers: { cookie, 'x-quotaplane-csrf': '1' } }), 401, 'UNAUTHENTICATED');
  });

  it('a state-changing request on the cookie needs the CSRF header; with it, it acts as the key', async () => {
    const { cookie } = await signIn();
    const refused = expectProblem(
      await fixture.app.inject({ method: 'PUT', url: '/v1/tenants/acme/quota?newTenant=true', headers: { cookie }, payload: { period: 'monthly' } }),
      401,
      'UNAUTHENTICATED',
    );
    expect(refused.detail).toContain('x-quotaplane-csrf: 1');
    expect(await fixture.store.tenant('acme').auditLog({ limit: 5 })).toEqual([]);
    const done = await fixture.app.inject({ method: 'PUT', url: '/v1/tenants/acme/quota?newTenant=true', headers: { cookie, 'x-quotaplane-csrf': '1' }, payload: { period: 'monthly' } });
    expect(done.statusCode, done.body).toBe(200);
    expect((await fixture.store.tenant('acme').auditLog({ limit: 5 }))[0]?.by).toEqual({ actor: 'ops-all', basis: 'authenticated' });
  });

  it('DELETE /v1/session ends it server-side: the old cookie is refused after, and the cookie is cleared', async () => {
    const { cookie } = await signIn();
    const ended = await fixture.app.inject({ method: 'DELETE', url: '/v1/session', headers: { cookie, 'x-quotaplane-csrf': '1' } });
    expect(ended.json()).toEqual({ ended: true });
    expect(String(ended.headers['set-cookie'])).toMatch(/^qp_session=; Path=\/v1; Max-Age=0; HttpOnly; SameSite=Strict$/);
    const after = expectProblem(await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: { cookie } }), 401, 'UNAUTHENTICATED');
    expect(after.detail).toContain('session ended');
  });

  it('a session ends after two hours, and with its key: revoked, or expired', async () => {
    const { cookie } = await signIn();
    fixture.clock.set(T0 + SESSION_TTL_MS);
    expectProblem(await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: { cookie } }), 401, 'UNAUTHENTICATED');
    const second = await signIn();
    await fixture.keys.revoke(fixture.key.opAll.record.id, T0 + SESSION_TTL_MS);
    expectProblem(await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: { cookie: second.cookie } }), 401, 'UNAUTHENTICATED');
  });

  it('a bearer key still works beside a cookie, and takes precedence over it', async () => {
    const { cookie } = await signIn();
    const who = await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: { cookie, ...bearer(fixture.key.runAcme) } });
    expect(who.json()).toMatchObject({ name: 'acme-runner' });
  });
});

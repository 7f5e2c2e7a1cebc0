import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bearer, expectProblem, type FixtureKey, type ServiceFixture, serviceFixture, stateSnapshot } from './http-fixtures.js';

/** What a route case is prepared with: runs the snapshot should watch. */
export interface Prepared {
  readonly runs: readonly string[];
}

/**
 * One route, as the shared security tests need it (code-anchors, unkey `runCommonRouteTests`). A
 * case never supplies its own credentials: every test below chooses the key, so each route gets
 * the same tests.
 * - `access`: who may call it; `runner` routes act for the tenant named in the body or query
 *   (`acme`), operator routes for the `acme` in the path;
 * - `request`: a valid request acting on acme (without `headers`);
 * - `prepare`: state the request needs (an admitted run, a halt), made through the plane;
 * - `malformed`: a request with one bad member and the field the 400 must name.
 */
export interface RouteCase {
  readonly name: string;
  readonly access: 'runner' | 'operator' | 'operator-all-tenants';
  readonly request: InjectOptions;
  readonly prepare?: (fixture: ServiceFixture) => Promise<Prepared>;
  readonly malformed?: { readonly request: InjectOptions; readonly field: string };
  /** True when the request has a JSON body (POST/PUT), so bad JSON and oversized bodies apply. */
  readonly hasBody: boolean;
  /** The success status of `request` with a key that may make it. */
  readonly okStatus: number;
  /** False for a route that names no tenant (`GET /v1/tenants` filters instead of refusing). */
  readonly tenantScoped?: boolean;
}

/**
 * Registers the shared tests of one route: no key → 401; an unknown, malformed or revoked key →
 * 401; a runner key of another tenant → 404; an operator key of another tenant → 404; a runner
 * key on an operator route → 404; a malformed request → 400 naming the field; for bodies, JSON
 * that does not parse → 400 and an oversized body → 413, each with the problem envelope; and after
 * every one of those refusals, nothing in the store changed. Last, the request succeeds with a
 * key that may make it, proving the case itself is sound.
 *
 * The tests of one route share one service, built and prepared once: each refusal is checked
 * against the state just before it (and so, refusal after refusal, against the prepared state),
 * and the one test that changes the store, the success, is registered last and runs last.
 */
export function runCommonRouteTests(route: RouteCase): void {
  // In the order registered, even under `--sequence.shuffle`: the success comes last.
  describe(`${route.name}: shared security and input tests`, { concurrent: false, shuffle: false }, () => {
    let fixture: ServiceFixture;
    let prepared: Prepared;

    beforeAll(async () => {
      fixture = await serviceFixture();
      prepared = (await route.prepare?.(fixture)) ?? { runs: [] };
    });
    afterAll(async () => {
      await fixture?.close();
    });

    const refusedWithoutChange = async (options: InjectOptions, status: number, code: string) => {
      const before = await stateSnapshot(fixture, prepared.runs);
      const response = await fixture.app.inject(options);
      const problem = expectProblem(response, status, code);
      expect(await stateSnapshot(fixture, prepared.runs)).toEqual(before);
      return { response, problem };
    };
    const withKey = (key: FixtureKey | string, options: InjectOptions = route.request): InjectOptions => ({
      ...options,
      headers: { ...(options.headers ?? {}), ...bearer(key) },
    });

    it('no key answers 401 with a Bearer challenge and changes nothing', async () => {
      const { response } = await refusedWithoutChange(route.request, 401, 'UNAUTHENTICATED');
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    });

    it('an unknown, a malformed and a revoked key each answer 401 and change nothing', async () => {
      await refusedWithoutChange(withKey('qp_not-a-key-anyone-made'), 401, 'UNAUTHENTICATED');
      await refusedWithoutChange({ ...route.request, headers: { authorization: 'Basic b3BzOnB3' } }, 401, 'UNAUTHENTICATED');
      await refusedWithoutChange(withKey(fixture.key.revoked), 401, 'UNAUTHENTICATED');
    });

    it('an expired key of every tenant answers 401 saying it expired, and changes nothing', async () => {
      const { problem } = await refusedWithoutChange(withKey(fixture.key.expired), 401, 'UNAUTHENTICATED');
      expect(problem.detail).toContain(`${fixture.key.expired.record.id} expired at`);
    });

    if (route.request.method !== 'GET') {
      it('a dashboard session cookie without the CSRF header answers 401 and changes nothing', async () => {
        const { problem } = await refusedWithoutChange({ ...route.request, headers: { ...(route.request.headers ?? {}), cookie: fixture.key.opAllSession } }, 401, 'UNAUTHENTICATED');
        expect(problem.detail).toContain('x-quotaplane-csrf: 1');
      });
    }

    it('a runner key of another tenant answers 404 and changes nothing', async () => {
      await refusedWithoutChange(withKey(fixture.key.runGlobex), 404, 'NOT_FOUND');
    });

    if (route.access !== 'operator-all-tenants' && route.tenantScoped !== false) {
      it('an operator key of another tenant answers 404 and changes nothing', async () => {
        await refusedWithoutChange(withKey(fixture.key.opGlobex), 404, 'NOT_FOUND');
      });
    }

    if (route.access !== 'runner') {
      it("a runner key on an operator route answers 404, even for the runner's own tenant, and changes nothing", async () => {
        await refusedWithoutChange(withKey(fixture.key.runAcme), 404, 'NOT_FOUND');
      });
    }

    if (route.access === 'operator-all-tenants') {
      it('an operator key of one tenant answers 404 and changes nothing', async () => {
        await refusedWithoutChange(withKey(fixture.key.opAcme), 404, 'NOT_FOUND');
      });
    }

    const malformed = route.malformed;
    if (malformed !== undefined) {
      it(`a malformed request answers 400 naming ${malformed.field} and changes nothing`, async () => {
        const { problem } = await refusedWithoutChange(withKey(fixture.key.opAll, malformed.request), 400, 'INVALID_ARGUMENT');
        expect(problem.field).toBe(malformed.field);
        expect(problem.detail).toContain(malformed.field);
      });
    }

    if (route.hasBody) {
      it('a body that is not JSON answers 400 naming the body and changes nothing', async () => {
        const { problem } = await refusedWithoutChange(
          withKey(fixture.key.opAll, {
            ...route.request,
            headers: { 'content-type': 'application/json' },
            payload: '{"tenant": "acme", ',
          }),
          400,
          'INVALID_ARGUMENT',
        );
        expect(problem.field).toBe('body');
      });

      it('an oversized body answers 413 and changes nothing', async () => {
        const { problem } = await refusedWithoutChange(
          withKey(fixture.key.opAll, {
            ...route.request,
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify({ tenant: 'acme', padding: 'x'.repeat(70 * 1024) }),
          }),
          413,
          'PAYLOAD_TOO_LARGE',
        );
        expect(problem.field).toBe('body');
      });
    }

    it(`the same request with a key that may make it answers ${route.okStatus}${route.hasBody ? ', and the snapshot sees what it changed' : ''}`, async () => {
      const key = route.access === 'runner' ? fixture.key.runAcme : route.access === 'operator' ? fixture.key.opAcme : fixture.key.opAll;
      const before = await stateSnapshot(fixture, prepared.runs);
      const response = await fixture.app.inject(withKey(key));
      expect(response.statusCode, response.body).toBe(route.okStatus);
      // Every body route writes: the snapshot that found "no change" above must see this one.
      if (route.hasBody) expect(await stateSnapshot(fixture, prepared.runs)).not.toEqual(before);
    });
  });
}

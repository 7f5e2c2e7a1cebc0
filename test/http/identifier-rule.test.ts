import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { bearer, expectProblem, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// docs/design/decisions.md "Identifiers": one identifier rule for every surface, with the same
// sentence from the library and from HTTP, and a length every route accepts.
describe('identifiers over HTTP', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  const post = (url: string, payload: unknown, key = f.key.opAll) => f.app.inject({ method: 'POST', url, payload: payload as object, headers: bearer(key) });

  it('a run id of 101 to 200 characters admitted over HTTP can be heartbeat and settled by its path', async () => {
    for (const run of ['r'.repeat(101), 'r'.repeat(200), '租'.repeat(200)]) {
      const admitted = await post('/v1/runs', { tenant: 'acme', run });
      expect(admitted.json()).toMatchObject({ ok: true, run, epoch: 1 });
      const path = `/v1/runs/${encodeURIComponent(run)}`;
      expect((await post(`${path}/heartbeat`, { tenant: 'acme', epoch: 1 })).statusCode).toBe(200);
      const settled = await post(`${path}/settle`, { tenant: 'acme', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
      expect(settled.statusCode).toBe(200);
    }
    expect(await f.store.tenant('acme').running()).toBe(0);
  });

  it('a run id of 201 characters in a path is refused by the identifier rule naming the field, not by the router', async () => {
    const problem = expectProblem(await post(`/v1/runs/${'r'.repeat(201)}/heartbeat`, { tenant: 'acme', epoch: 1 }), 400, 'INVALID_ARGUMENT');
    expect(problem.field).toBe('run');
    expect(problem.detail).toMatch(/^run: must be 1–200 characters, got 201 \(identifiers are/);
  });

  it('a run id or tenant . or .. is refused at admission and at quota set, since no path could name it afterwards', async () => {
    for (const run of ['.', '..']) {
      const problem = expectProblem(await post('/v1/runs', { tenant: 'acme', run }), 400, 'INVALID_ARGUMENT');
      expect([problem.field, problem.detail]).toEqual(['run', expect.stringContaining('which no URL path can carry')]);
    }
    await expect(f.plane.setQuota('..', { period: 'monthly' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'tenant' } });
  });

  it('a tenant holding U+202E gets the library\'s sentence, in the body and in the path', async () => {
    const tenant = 'acme\u202eevil';
    let libraryMessage = '';
    try {
      await f.plane.admit({ tenant });
    } catch (error) {
      expect(error).toBeInstanceOf(QuotaError);
      libraryMessage = (error as QuotaError).message;
    }
    expect(libraryMessage).toBe(
      'tenant: must hold no control or format character, but holds U+202E at position 5, got "acme\\u202eevil" (identifiers are 1–200 characters of well-formed Unicode, with no control or format character and no surrounding space, and not . or ..)',
    );
    const body = expectProblem(await post('/v1/runs', { tenant }), 400, 'INVALID_ARGUMENT');
    expect(body).toMatchObject({ field: 'tenant', detail: libraryMessage });
    const path = expectProblem(await f.app.inject({ method: 'GET', url: `/v1/tenants/${encodeURIComponent(tenant)}/usage`, headers: bearer(f.key.opAll) }), 400, 'INVALID_ARGUMENT');
    expect(path).toMatchObject({ field: 'tenant', detail: libraryMessage });
    // Only the tenants of the fixture's keys (rules.md#l95): nothing under the refused name.
    expect(await f.store.tenants()).toEqual(['acme', 'globex']);
  });

  it('lone surrogates and surrounding spaces are refused in an agent name and a chain, nothing admitted', async () => {
    const surrogate = expectProblem(await post('/v1/runs', { tenant: 'acme', agent: { name: 'bot\ud800', digest: 'a'.repeat(64) } }), 400, 'INVALID_ARGUMENT');
    expect(surrogate.detail).toMatch(/must be well-formed Unicode, but holds a lone surrogate U\+D800 at position 4/);
    const spaced = expectProblem(await post('/v1/runs', { tenant: 'acme', chain: ['alice', ' bob'] }), 400, 'INVALID_ARGUMENT');
    expect(spaced).toMatchObject({ field: 'chain[1]' });
    expect(spaced.detail).toMatch(/^chain\[1\]: must not begin or end with a space/);
    expect(await f.store.tenant('acme').running()).toBe(0);
  });
});

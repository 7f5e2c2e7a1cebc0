import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_CALL_LEASE_MS, MAX_CALL_SUBJECTS, MAX_CALL_WINDOW_SECONDS, MAX_CEILINGS_PER_SUBJECT } from '../../src/core/call-ceilings.js';
import { DIGEST_PATTERN } from '../../src/core/halt-scope.js';
import { MAX_IDENTIFIER_LENGTH } from '../../src/core/identifiers.js';
import { MAX_INSTANT_MS } from '../../src/core/instant.js';
import { PERIOD_KEY_PATTERN } from '../../src/core/period.js';
import { MAX_LIST_LIMIT } from '../../src/plane/operator-types.js';
import { MAX_CHAIN_LENGTH } from '../../src/store/lifecycle-arguments.js';
import { MAX_LEASE_MS } from '../../src/store/store-arguments.js';
import { serviceFixture, type ServiceFixture } from './http-fixtures.js';
import type { OpenApiDocument } from './openapi-check.js';

// One validation layer (docs/design/architecture.md "Validation, once"): the bounds a client is
// generated from are the constants the plane and validated() check with, so the two cannot drift.

type Schema = Record<string, any>;

describe('the bounds of /openapi.json are the input rules\' constants', () => {
  let f: ServiceFixture;
  let admitBody: Schema;
  let document: OpenApiDocument;
  beforeAll(async () => {
    f = await serviceFixture();
    document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    admitBody = document.paths['/v1/runs']?.post?.requestBody?.content['application/json']?.schema as Schema;
  });
  afterAll(() => f.close());

  it('an admission: atMs up to MAX_INSTANT_MS, leaseMs 1 to MAX_LEASE_MS, chain of MAX_CHAIN_LENGTH identifiers, the digest pattern', () => {
    const members = admitBody.properties as Record<string, Schema>;
    expect([members.atMs?.minimum, members.atMs?.maximum]).toEqual([0, MAX_INSTANT_MS]);
    expect([members.leaseMs?.minimum, members.leaseMs?.maximum]).toEqual([1, MAX_LEASE_MS]);
    expect(members.chain?.maxItems).toBe(MAX_CHAIN_LENGTH);
    expect(members.chain?.items?.maxLength).toBe(MAX_IDENTIFIER_LENGTH);
    expect(members.tenant?.maxLength).toBe(MAX_IDENTIFIER_LENGTH);
    expect(members.agent?.properties?.digest?.pattern).toBe(DIGEST_PATTERN);
  });

  it('a listing page is 1 to MAX_LIST_LIMIT, and a period key has the core pattern', () => {
    const json = JSON.stringify(document);
    const limits = Object.values(document.paths)
      .flatMap((methods) => Object.values(methods))
      .flatMap((operation) => (operation.parameters ?? []) as unknown as Schema[])
      .filter((parameter) => parameter.name === 'limit')
      .map((parameter) => parameter.schema?.maximum as unknown);
    expect(limits.length).toBeGreaterThan(3);
    expect(new Set(limits)).toEqual(new Set([MAX_LIST_LIMIT]));
    const patterns = [...json.matchAll(/"pattern":("(?:[^"\\]|\\.)*")/g)].map((match) => JSON.parse(match[1]!) as string);
    expect(patterns).toContain(PERIOD_KEY_PATTERN);
    expect(patterns).toContain(DIGEST_PATTERN);
  });

  it('a model call and model-call ceilings: the lease, the window, ceilings per subject and named subjects are the core constants', () => {
    const body = (path: string, method: 'post' | 'put') => document.paths[path]?.[method]?.requestBody?.content['application/json']?.schema as Schema;
    const reserve = body('/v1/tenants/{tenant}/calls', 'post').properties as Record<string, Schema>;
    expect([reserve.leaseMs?.minimum, reserve.leaseMs?.maximum]).toEqual([1000, MAX_CALL_LEASE_MS]);
    expect(reserve.atMs?.maximum).toBe(MAX_INSTANT_MS);
    const ceilings = (body('/v1/tenants/{tenant}/call-ceilings', 'put').properties as Record<string, Schema>).ceilings?.anyOf?.[0] as Schema;
    const tenantList = ceilings.properties.tenant as Schema;
    expect(tenantList.maxItems).toBe(MAX_CEILINGS_PER_SUBJECT);
    expect(tenantList.items.properties.windowSeconds.maximum).toBe(MAX_CALL_WINDOW_SECONDS);
    expect(ceilings.properties.models.maxProperties).toBe(MAX_CALL_SUBJECTS);
    expect(ceilings.properties.leaseMs.maximum).toBe(MAX_CALL_LEASE_MS);
  });
});

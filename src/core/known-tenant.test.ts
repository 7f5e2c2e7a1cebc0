import { describe, expect, it } from 'vitest';

import { QuotaError } from './errors.js';
import {
  isKnownTenant,
  nearestTenant,
  TENANT_RECORDS,
  unknownTenantError,
  unknownTenantMessage,
  unknownTenantOf,
  type TenantRecords,
} from './known-tenant.js';

const none = Object.fromEntries(TENANT_RECORDS.map((record) => [record, false])) as TenantRecords;

describe('which tenants exist (rules.md#l95)', () => {
  it('L95 a tenant with a record of any one kind exists, and one with none does not', () => {
    expect(isKnownTenant(none)).toBe(false);
    for (const record of TENANT_RECORDS) expect(isKnownTenant({ ...none, [record]: true }), record).toBe(true);
  });

  it('L95.3 suggests the nearest known tenant by edit distance: a typo, a missing or swapped letter, another case', () => {
    const known = ['acme', 'globex', 'initech', 'umbrella'];
    expect(nearestTenant('acmee', known)).toBe('acme');
    expect(nearestTenant('acm', known)).toBe('acme');
    expect(nearestTenant('glboex', known)).toBe('globex');
    expect(nearestTenant('ACME', known)).toBe('acme');
    expect(nearestTenant('initek', known)).toBe('initech');
  });

  it('L95.3 suggests nothing further than a third of the name (at most 3 edits), and never the name itself', () => {
    expect(nearestTenant('zz', ['acme'])).toBeNull();
    expect(nearestTenant('xcmx', ['acme'])).toBeNull();
    expect(nearestTenant('acme', ['acme'])).toBeNull();
    expect(nearestTenant('umbrellacorp', ['umbrella'])).toBeNull();
    expect(nearestTenant('anything', [])).toBeNull();
  });

  it('L95.3 of two equally near, the one nearer with case counted wins, then byte order', () => {
    expect(nearestTenant('Acmx', ['acme', 'Acme'])).toBe('Acme');
    expect(nearestTenant('acmx', ['acmf', 'acme'])).toBe('acme');
  });

  it('L95.1 the refusal is NOT_FOUND naming the tenant, the act and the suggestion, and says how to create it', () => {
    const error = unknownTenantError('acmee', ['acme', 'globex'], 'halt');
    expect(error).toBeInstanceOf(QuotaError);
    expect(error.code).toBe('NOT_FOUND');
    expect(error.details).toEqual({ field: 'tenant', tenant: 'acmee', act: 'halt', suggestion: 'acme' });
    expect(error.message).toBe("tenant 'acmee' does not exist: it has no quota and no history; did you mean 'acme'? pass newTenant: true to create 'acmee'");
    expect(unknownTenantOf(error)).toEqual({ tenant: 'acmee', act: 'halt', suggestion: 'acme' });
  });

  it('L95.1 with no tenant near, it says so; a lift or a release has nothing to create', () => {
    expect(unknownTenantError('zeta', ['acme'], 'quota').message).toBe(
      "tenant 'zeta' does not exist: it has no quota and no history; no known tenant has a name near it; pass newTenant: true to create 'zeta'",
    );
    expect(unknownTenantError('zeta', ['acme'], 'quota').details).toEqual({ field: 'tenant', tenant: 'zeta', act: 'quota' });
    expect(unknownTenantMessage({ tenant: 'acmee', suggestion: 'acme', act: 'lift' }, 'pass --new-tenant', 'store sqlite:q.db')).toBe(
      "tenant 'acmee' does not exist in store sqlite:q.db: it has no quota and no history, so it has no halt to lift; did you mean 'acme'?",
    );
    expect(unknownTenantMessage({ tenant: 'acmee', suggestion: null, act: 'release' }, 'pass --new-tenant')).toBe(
      "tenant 'acmee' does not exist: it has no quota and no history, so it has no run to release; no known tenant has a name near it",
    );
  });

  it('L95.1 only an unknown-tenant refusal reads back as one', () => {
    expect(unknownTenantOf(new QuotaError('NOT_FOUND', 'no such run', { details: { run: 'r1' } }))).toBeNull();
    expect(unknownTenantOf(new QuotaError('NOT_FOUND', 'tenant is not in the store', { details: { field: 'tenant' } }))).toBeNull();
    expect(unknownTenantOf(new QuotaError('INVALID_ARGUMENT', 'x', { details: { field: 'tenant', tenant: 'a', act: 'halt' } }))).toBeNull();
    expect(unknownTenantOf(new Error('x'))).toBeNull();
  });
});

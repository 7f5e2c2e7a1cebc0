import type { FastifyError } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import {
  DEFAULT_RETRY_AFTER,
  errorProblem,
  GENERIC_INTERNAL_DETAIL,
  refusalStatus,
  retryAfterSeconds,
  statusOf,
  validationField,
  type ProblemCode,
} from '../../src/http/errors.js';
import { bearer, expectProblem, serviceFixture, type ServiceFixture } from './http-fixtures.js';

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z

describe('the code → status switch', () => {
  it('maps every code to the status the issue names', () => {
    const expected: Record<ProblemCode, number> = {
      TooManyRuns: 429,
      SpentOut: 429,
      RateLimited: 429,
      Halted: 423,
      Withheld: 423,
      Unbounded: 422,
      UncountableRate: 422,
      CallLimited: 429,
      CallNeverFits: 422,
      INVALID_ARGUMENT: 400,
      UNAUTHENTICATED: 401,
      NOT_FOUND: 404,
      CONFLICT: 409,
      PAYLOAD_TOO_LARGE: 413,
      UNSUPPORTED_MEDIA_TYPE: 415,
      STORE_UNAVAILABLE: 503,
      STORE_CORRUPT: 500,
      SCHEMA_TOO_NEW: 500,
      STORE_MISCONFIGURED: 500,
      INTERNAL: 500,
    };
    for (const [code, status] of Object.entries(expected)) expect([code, statusOf(code as ProblemCode)]).toEqual([code, status]);
  });
});

describe('Retry-After', () => {
  const spentOut = { code: 'SpentOut', tenant: 'acme', period: '2026-01-05', unit: 'tokens', limit: 1000, bound: 'tenant' } as const;

  it('RateLimited: until retryAtMs, rounded up to whole seconds, never below 1', () => {
    const limited = { code: 'RateLimited', tenant: 'acme', grant: 'g', ceiling: { count: 1, windowSeconds: 60 }, reached: 1 } as const;
    expect(retryAfterSeconds({ ...limited, retryAtMs: T0 + 1500 }, T0, DEFAULT_RETRY_AFTER)).toBe(2);
    expect(retryAfterSeconds({ ...limited, retryAtMs: T0 + 60_000 }, T0, DEFAULT_RETRY_AFTER)).toBe(60);
    expect(retryAfterSeconds({ ...limited, retryAtMs: T0 }, T0, DEFAULT_RETRY_AFTER)).toBe(1);
  });

  it('SpentOut whose settled spend alone leaves no room: until the period ends', () => {
    // Settled 900 + requested 200 > 1000: releasing holds cannot help; the day ends in 16 hours.
    expect(retryAfterSeconds({ ...spentOut, settled: 900, reserved: 0, requested: 200 }, T0, DEFAULT_RETRY_AFTER)).toBe(16 * 3600);
    const monthly = { ...spentOut, period: '2026-01', settled: 1000, reserved: 0, requested: 1 };
    expect(retryAfterSeconds(monthly, T0, DEFAULT_RETRY_AFTER)).toBe((Date.UTC(2026, 1, 1) - T0) / 1000);
  });

  it('D13: a SpentOut the period end clears, answered 403, carries no Retry-After (generic retry logic must not wait weeks)', () => {
    expect(retryAfterSeconds({ ...spentOut, settled: 900, reserved: 0, requested: 200 }, T0, DEFAULT_RETRY_AFTER, 403)).toBeNull();
    expect(refusalStatus({ ...spentOut, settled: 900, reserved: 0, requested: 200 }, 403)).toBe(403);
    expect(refusalStatus({ ...spentOut, settled: 900, reserved: 0, requested: 200 })).toBe(429);
    // Held spend may still come back: 429 and the short wait, whatever the setting.
    expect(refusalStatus({ ...spentOut, settled: 100, reserved: 800, requested: 200 }, 403)).toBe(429);
    expect(retryAfterSeconds({ ...spentOut, settled: 100, reserved: 800, requested: 200 }, T0, DEFAULT_RETRY_AFTER, 403)).toBe(1);
    expect(refusalStatus({ ...spentOut, settled: 0, reserved: 0, requested: 1001 }, 403)).toBe(422);
  });

  it('SpentOut that held spend may still free, and TooManyRuns: the short default', () => {
    expect(retryAfterSeconds({ ...spentOut, settled: 100, reserved: 800, requested: 200 }, T0, DEFAULT_RETRY_AFTER)).toBe(1);
    expect(retryAfterSeconds({ code: 'TooManyRuns', tenant: 'acme', running: 2, limit: 2, bound: 'tenant' }, T0, { backPressureSeconds: 3, unavailableSeconds: 9 })).toBe(3);
  });

  it('stops and unbounded requests get none: waiting does not help', () => {
    expect(retryAfterSeconds({ code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'tenant' }, T0, DEFAULT_RETRY_AFTER)).toBeNull();
    expect(
      retryAfterSeconds({ code: 'Halted', tenant: 'acme', scope: 'tenant', reason: 'r', by: { actor: 'a', basis: 'asserted' }, haltedAtMs: T0 }, T0, DEFAULT_RETRY_AFTER),
    ).toBeNull();
    expect(retryAfterSeconds({ code: 'UncountableRate', grant: 'g', ceiling: { count: 1, windowSeconds: 0 } }, T0, DEFAULT_RETRY_AFTER)).toBeNull();
  });
});

describe('errorProblem', () => {
  const context = (logged: unknown[]) => ({ requestId: 'req_1', retryAfter: DEFAULT_RETRY_AFTER, logInternal: (error: unknown) => logged.push(error) });

  it('an unexpected error is a 500 with a generic detail, logged with its cause and never shown', () => {
    const logged: unknown[] = [];
    const cause = new TypeError('cannot read properties of undefined (secret internals)');
    const { problem, headers } = errorProblem(cause, context(logged));
    expect(problem).toMatchObject({ status: 500, code: 'INTERNAL', detail: GENERIC_INTERNAL_DETAIL, requestId: 'req_1' });
    expect(JSON.stringify(problem)).not.toContain('secret internals');
    expect(headers).toEqual({});
    expect(logged).toEqual([cause]);
  });

  it('a corrupt store keeps its code but not its message; an unavailable one is 503 with Retry-After, not logged', () => {
    const logged: unknown[] = [];
    const corrupt = errorProblem(new QuotaError('STORE_CORRUPT', 'row 7 of /var/lib/q.db is garbage'), context(logged));
    expect(corrupt.problem).toMatchObject({ status: 500, code: 'STORE_CORRUPT', detail: GENERIC_INTERNAL_DETAIL });
    expect(logged).toHaveLength(1);
    const unavailable = errorProblem(new QuotaError('STORE_UNAVAILABLE', 'the store is closed'), context(logged));
    expect(unavailable.problem).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE', detail: 'the store is closed' });
    expect(unavailable.headers).toEqual({ 'retry-after': '2' });
    expect(logged).toHaveLength(1);
  });

  it('INVALID_ARGUMENT keeps the field it names', () => {
    const { problem } = errorProblem(new QuotaError('INVALID_ARGUMENT', 'chain[1]: must be printable', { details: { field: 'chain[1]' } }), context([]));
    expect(problem).toMatchObject({ status: 400, field: 'chain[1]', detail: 'chain[1]: must be printable' });
  });
});

describe('validationField names the field as the plane spells it', () => {
  const fastifyError = (validation: unknown[], context = 'body') =>
    ({ code: 'FST_ERR_VALIDATION', statusCode: 400, message: 'x', validation, validationContext: context }) as unknown as FastifyError;

  it('nested members with dots, array items with brackets, unknown and missing members by name', () => {
    expect(validationField(fastifyError([{ keyword: 'type', instancePath: '/budget/maxTokens', params: {}, message: 'must be integer' }]))).toEqual({
      field: 'budget.maxTokens',
      message: 'must be integer',
    });
    expect(validationField(fastifyError([{ keyword: 'maxLength', instancePath: '/chain/2', params: {}, message: 'must NOT have more than 200 characters' }])).field).toBe(
      'chain[2]',
    );
    expect(validationField(fastifyError([{ keyword: 'additionalProperties', instancePath: '/budget', params: { additionalProperty: 'maxTokenz' } }]))).toEqual({
      field: 'budget.maxTokenz',
      message: 'is not a member of this request; remove it',
    });
    expect(validationField(fastifyError([{ keyword: 'required', instancePath: '', params: { missingProperty: 'epoch' } }])).field).toBe('epoch');
    expect(validationField(fastifyError([{ keyword: 'type', instancePath: '', params: {}, message: 'must be object' }])).field).toBe('body');
    expect(validationField(fastifyError([{ keyword: 'type', instancePath: '', params: {} }], 'querystring')).field).toBe('query');
  });
});

describe('a 400 from schema validation says what is allowed and what was sent', () => {
  let fixture: ServiceFixture;
  beforeEach(async () => {
    fixture = await serviceFixture();
  });
  afterEach(() => fixture.close());

  const detailOf = async (request: { method: 'GET' | 'PUT' | 'POST'; url: string; payload?: Record<string, unknown> }) => {
    const response = await fixture.app.inject({ ...request, headers: bearer(fixture.key.opAll) });
    return expectProblem(response, 400, 'INVALID_ARGUMENT');
  };

  it('a union of literals lists its choices, a pattern says the form in words, a bound says at least', async () => {
    expect(await detailOf({ method: 'PUT', url: '/v1/tenants/acme/quota', payload: { period: 'weekly' } })).toMatchObject({
      field: 'period',
      detail: 'period: must be one of "monthly", "daily"; got "weekly"',
    });
    expect(await detailOf({ method: 'GET', url: '/v1/tenants/acme/usage?period=2026-13' })).toMatchObject({
      field: 'period',
      detail: `period: must be a billing period, 'YYYY-MM' for a month or 'YYYY-MM-DD' for a day (UTC); got "2026-13"`,
    });
    expect((await detailOf({ method: 'GET', url: '/v1/tenants/acme/runs?status=bogus' })).detail).toMatch(
      /^status: must be one or more run statuses separated by commas \(no spaces\), from .*running.*; got "bogus"$/,
    );
    expect(await detailOf({ method: 'POST', url: '/v1/runs', payload: { tenant: 'acme', budget: { maxTokens: -1 } } })).toMatchObject({
      field: 'budget.maxTokens',
      detail: 'budget.maxTokens: must be at least 0; got -1',
    });
  });

  it('a value sent is shown with control and format characters escaped', async () => {
    const problem = await detailOf({ method: 'PUT', url: '/v1/tenants/acme/quota', payload: { period: 'month\u202ely' } });
    expect(problem.detail).toBe('period: must be one of "monthly", "daily"; got "month\\u202ely"');
  });
});

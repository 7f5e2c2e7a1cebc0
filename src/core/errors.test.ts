import { expect, it } from 'vitest';
import { invalidArgument, isQuotaError, QuotaError, type QuotaErrorCode } from './errors.js';

it('QuotaError carries its code, frozen details and cause', () => {
  const cause = new Error('socket closed');
  const error = new QuotaError('STORE_UNAVAILABLE', 'the store could not answer', { details: { backend: 'pg' }, cause });
  expect(error).toBeInstanceOf(Error);
  expect(error.name).toBe('QuotaError');
  expect(error.code).toBe('STORE_UNAVAILABLE');
  expect(error.details).toEqual({ backend: 'pg' });
  expect(Object.isFrozen(error.details)).toBe(true);
  expect(error.cause).toBe(cause);
  expect(new QuotaError('INTERNAL', 'bug').details).toEqual({});
});

it('only STORE_UNAVAILABLE is retryable', () => {
  const codes: QuotaErrorCode[] = [
    'INVALID_ARGUMENT',
    'CONFLICT',
    'NOT_FOUND',
    'STORE_UNAVAILABLE',
    'STORE_CORRUPT',
    'SCHEMA_TOO_NEW',
    'STORE_MISCONFIGURED',
    'INTERNAL',
  ];
  for (const code of codes) expect(new QuotaError(code, 'x').retryable).toBe(code === 'STORE_UNAVAILABLE');
});

it('invalidArgument names the field in the message and in details', () => {
  const error = invalidArgument('budget.maxTokens', 'must be a non-negative integer');
  expect(error.code).toBe('INVALID_ARGUMENT');
  expect(error.message).toBe('budget.maxTokens: must be a non-negative integer');
  expect(error.details.field).toBe('budget.maxTokens');
});

it('isQuotaError matches the class and, when given, the code', () => {
  const error = new QuotaError('CONFLICT', 'settled twice');
  expect(isQuotaError(error)).toBe(true);
  expect(isQuotaError(error, 'CONFLICT')).toBe(true);
  expect(isQuotaError(error, 'INTERNAL')).toBe(false);
  expect(isQuotaError(new Error('plain'))).toBe(false);
  expect(isQuotaError({ code: 'CONFLICT' })).toBe(false);
});

it('a QuotaError has a cause only when one is given', () => {
  expect('cause' in new QuotaError('CONFLICT', 'x')).toBe(false);
  const cause = new Error('driver');
  expect(new QuotaError('STORE_UNAVAILABLE', 'x', { cause }).cause).toBe(cause);
});

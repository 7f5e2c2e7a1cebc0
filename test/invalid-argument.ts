import { expect } from 'vitest';

import { QuotaError } from '../src/core/errors.js';

/**
 * Runs `fn`, which must throw an `INVALID_ARGUMENT` QuotaError whose message begins with the field
 * it names (`<field>: …`, so a person reading it knows what to fix), and answers that error. Fails
 * the test when nothing is thrown or anything else is.
 */
export function invalidArgumentOf(fn: () => unknown): QuotaError {
  let thrown = false;
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    thrown = true;
    caught = error;
  }
  if (!thrown) expect.unreachable('expected an INVALID_ARGUMENT QuotaError, but nothing was thrown');
  expect(caught).toBeInstanceOf(QuotaError);
  const error = caught as QuotaError;
  expect(error.code).toBe('INVALID_ARGUMENT');
  expect(error.message.startsWith(`${String(error.details.field)}: `)).toBe(true);
  return error;
}

/** The field an `INVALID_ARGUMENT` thrown by `fn` names (see {@link invalidArgumentOf}). */
export function invalidFieldOf(fn: () => unknown): string {
  return String(invalidArgumentOf(fn).details.field);
}

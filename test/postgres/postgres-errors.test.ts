import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { decisionFault, toQuotaError } from '../../src/store/postgres/postgres-errors.js';

// The one place pg's errors become the port's faults: no server needed.

function pgError(code: string, message = 'server said no'): Error {
  return Object.assign(new Error(message), { code });
}

describe('PostgreSQL error classification', () => {
  it.each([
    ['08006', 'connection_failure'],
    ['08001', 'unable to connect'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P03', 'the database system is starting up'],
    ['57014', 'canceling statement due to statement timeout'],
    ['55P03', 'canceling statement due to lock timeout'],
    ['53300', 'too many connections'],
    ['40001', 'could not serialize access'],
    ['40P01', 'deadlock detected'],
    ['25006', 'cannot execute INSERT in a read-only transaction'],
    ['28P01', 'password authentication failed'],
    ['3D000', 'database does not exist'],
  ])('SQLSTATE %s (%s) is STORE_UNAVAILABLE, retryable, with the cause kept', (code, message) => {
    const cause = pgError(code, message);
    const error = toQuotaError(cause);
    expect({ code: error.code, retryable: error.retryable, sqlstate: error.details.code }).toEqual({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      sqlstate: code,
    });
    expect(error.cause).toBe(cause);
    expect(error.message).toContain(message);
  });

  it.each(['XX001', 'XX002', '42P01', '42883', '3F000'])('SQLSTATE %s is STORE_CORRUPT and not retryable', (code) => {
    const error = toQuotaError(pgError(code));
    expect({ code: error.code, retryable: error.retryable }).toEqual({ code: 'STORE_CORRUPT', retryable: false });
  });

  it.each([
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Query read timeout'),
    new Error('Client has encountered a connection error and is not queryable'),
  ])('the driver error "%s" is STORE_UNAVAILABLE', (cause) => {
    expect(toQuotaError(cause).code).toBe('STORE_UNAVAILABLE');
  });

  it('an unknown SQLSTATE (a unique violation) and a plain TypeError are INTERNAL: bugs, never answers', () => {
    expect(toQuotaError(pgError('23505', 'duplicate key')).code).toBe('INTERNAL');
    expect(toQuotaError(new TypeError('x is not a function')).code).toBe('INTERNAL');
  });

  it('a QuotaError passes through unchanged', () => {
    const original = new QuotaError('CONFLICT', 'settled twice');
    expect(toQuotaError(original)).toBe(original);
  });
});

// A decision's statement once handed to a connection (postgres-connection.ts decide): only an ERROR
// the server answered, or a statement the driver never sent, proves that nothing committed.
describe('the fault of a decision sent to the server', () => {
  const serverError = (code: string, severity: string, message: string): Error => Object.assign(new Error(message), { code, severity });

  it.each([
    new Error('Query read timeout'),
    new Error('Connection terminated unexpectedly'),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    serverError('57P01', 'FATAL', 'terminating connection due to administrator command'),
    serverError('57P02', 'FATAL', 'terminating connection because of crash of another server process'),
  ])('"%s" (no answer to the statement, or a session ended after it) has an unknown outcome, never "nothing was decided"', (cause) => {
    const error = decisionFault(cause);
    expect({ code: error.code, retryable: error.retryable }).toEqual({ code: 'STORE_UNAVAILABLE', retryable: true });
    expect(error.details).toMatchObject({ backend: 'postgres', step: 'commit', outcome: 'unknown' });
    expect(error.message).not.toMatch(/nothing was decided/);
    expect(error.message).toMatch(/retry the same call with the same payload \(an admission with the same run id, the same settle\) and the books answer it$/);
    expect(error.cause).toBe(cause);
  });

  it.each([
    serverError('57014', 'ERROR', 'canceling statement due to statement timeout'),
    serverError('55P03', 'ERROR', 'canceling statement due to lock timeout'),
    serverError('40001', 'ERROR', 'could not serialize access'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('Client was closed and is not queryable'),
  ])('"%s" (an ERROR the server answered, or a statement never sent) decided nothing, and says so', (cause) => {
    const error = decisionFault(cause);
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.details.outcome).toBeUndefined();
    expect(error.message).toMatch(/nothing was decided/);
  });

  it('a fault that is not an unavailability keeps its own code, and a QuotaError passes through', () => {
    expect(decisionFault(serverError('23505', 'ERROR', 'duplicate key')).code).toBe('INTERNAL');
    expect(decisionFault(serverError('XX001', 'ERROR', 'invalid page')).code).toBe('STORE_CORRUPT');
    const original = new QuotaError('STORE_UNAVAILABLE', 'the store is closed');
    expect(decisionFault(original)).toBe(original);
  });
});

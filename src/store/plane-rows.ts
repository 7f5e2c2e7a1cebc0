import { QuotaError } from '../core/errors.js';
import { parsePlaneCeiling, type PlaneCeiling } from '../core/plane-ceiling.js';

/**
 * The stored plane-wide ceiling, validated with `parsePlaneCeiling` like any untrusted input:
 * `value` is the parsed JSON (PostgreSQL JSONB) or its text (SQLite). An unreadable one throws
 * `STORE_CORRUPT`: admissions refuse rather than guess a ceiling.
 */
export function decodePlaneCeiling(value: unknown): PlaneCeiling {
  try {
    return parsePlaneCeiling(typeof value === 'string' ? JSON.parse(value) : value, 'plane');
  } catch (error) {
    throw new QuotaError('STORE_CORRUPT', 'the store holds a plane-wide ceiling that cannot be read; set it again (quotaplane quota plane set)', {
      details: {},
      cause: error,
    });
  }
}

import { isQuotaError } from '../../core/errors.js';
import type { PlaneStatus } from '../../plane/plane.js';
import type { OperatorTarget } from './operator-target.js';

/**
 * The plane-wide ceiling and halt with their usage, or `null` where the caller may not read them (a
 * key that does not cover every tenant is answered `NOT_FOUND` by the server).
 */
export async function planeOrNull(target: OperatorTarget): Promise<PlaneStatus | null> {
  try {
    return await target.planeStatus();
  } catch (error) {
    if (isQuotaError(error, 'NOT_FOUND')) return null;
    throw error;
  }
}

import { describe } from './amounts.js';
import { invalidArgument } from './errors.js';

/** Longest identifier accepted, in characters (DESIGN.md decision 14). */
export const MAX_IDENTIFIER_LENGTH = 200;

// Printable means no control characters (C0, DEL, C1) and no line or paragraph separators.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** True for 1–200 printable characters (DESIGN.md decision 14). */
export function isIdentifier(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= MAX_IDENTIFIER_LENGTH &&
    !UNPRINTABLE.test(value) &&
    value.trim().length > 0
  );
}

/**
 * Returns `value` when it is a valid identifier (tenant, run, grant, agent name, principal,
 * actor): 1–200 printable characters, not only spaces. Otherwise throws `INVALID_ARGUMENT`
 * naming `field` (DESIGN.md decision 14).
 */
export function requireIdentifier(field: string, value: unknown): string {
  if (!isIdentifier(value)) {
    throw invalidArgument(
      field,
      `must be 1–${MAX_IDENTIFIER_LENGTH} printable characters, got ${describe(value)}`,
    );
  }
  return value;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Normalises a run id: `run_<ULID>` as is, a bare ULID gets the `run_` prefix (contract §1), and
 * any other valid identifier is a caller-supplied id kept as given. Throws `INVALID_ARGUMENT`
 * naming `field` otherwise.
 */
export function normaliseRunId(field: string, value: unknown): string {
  const id = requireIdentifier(field, value);
  return ULID.test(id) ? `run_${id}` : id;
}

/** The tenant name API keys use to mean every tenant (DESIGN.md decision 14); never a tenant of its own. */
export const EVERY_TENANT = '*';

/**
 * Returns `value` when it names one tenant: a valid identifier ({@link requireIdentifier}) other
 * than `*`, which API keys use to mean every tenant, so a tenant literally named `*` could be
 * halted or given a quota while nothing real stopped. Throws `INVALID_ARGUMENT` naming `field`
 * otherwise (DESIGN.md decision 14).
 */
export function requireTenant(field: string, value: unknown): string {
  const tenant = requireIdentifier(field, value);
  if (tenant === EVERY_TENANT) {
    throw invalidArgument(field, `'${EVERY_TENANT}' means every tenant for API keys and is not a tenant name; name one tenant`);
  }
  return tenant;
}

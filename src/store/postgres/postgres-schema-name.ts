import { invalidArgument } from '../../core/errors.js';

/** The schema quotaplane's tables live in when none is configured. */
export const DEFAULT_POSTGRES_SCHEMA = 'quotaplane';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Validates a configured schema name and returns it quoted, ready to interpolate into SQL. Only
 * lowercase letters, digits and `_`, starting with a letter or `_`, at most 63 bytes (PostgreSQL's
 * identifier limit): such a name means the same quoted or unquoted, so operators can type it in
 * psql as is. This is the only place a schema name enters SQL text; every value is a `$n` parameter.
 * Throws `INVALID_ARGUMENT` naming `schema`.
 */
export function quoteSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw invalidArgument(
      'schema',
      `must be 1–63 characters of lowercase letters, digits and '_', not starting with a digit, got ${JSON.stringify(schema)}`,
    );
  }
  return `"${schema}"`;
}

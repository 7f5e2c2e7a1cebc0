import { describe } from './amounts.js';
import { invalidArgument } from './errors.js';
import { requireIdentifier } from './identifiers.js';

/**
 * Who threw or lifted a halt or changed a quota (docs/concepts/glossary.md, "operator"): `actor` is
 * a name; `basis` says whether anything verified it. The CLI records `asserted`; the HTTP API,
 * after an API key was checked, records `authenticated`.
 */
export interface Operator {
  readonly actor: string;
  readonly basis: 'asserted' | 'authenticated';
}

/** Validates an untrusted operator. Throws `INVALID_ARGUMENT` naming `field` (not an object), `field.actor` or `field.basis`. */
export function parseOperator(value: unknown, field = 'by'): Operator {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an operator, { actor: '<name>', basis: 'asserted' }, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const actor = requireIdentifier(`${field}.actor`, record.actor);
  const basis = record.basis ?? 'asserted';
  if (basis !== 'asserted' && basis !== 'authenticated') {
    throw invalidArgument(`${field}.basis`, `must be 'asserted' or 'authenticated'`);
  }
  return { actor, basis };
}

import { haltScopeForms, parseHaltScope, PLANE_HALT_KEY } from '../../core/halt-scope.js';
import { UsageError } from '../usage-error.js';

/**
 * A halt scope as the CLI takes it: one of the four forms, else a usage error whose message lists
 * them (`haltScopeForms()`, docs/design/rules.md#d12). Checked before the store is opened.
 */
export function cliScope(text: string): string {
  if (parseHaltScope(text) === null) throw new UsageError(`scope must be one of ${haltScopeForms()}; got ${JSON.stringify(text)}`);
  return text;
}

/**
 * The tenant a `halt` or `lift` names, checked against its scope before the store is opened: the
 * plane-wide halt (`plane`, docs/design/rules.md#c49) takes no `--tenant`; every other scope needs
 * one. Answers `null` for the plane.
 */
export function cliHaltTenant(scope: string, tenant: string | undefined): string | null {
  if (scope === PLANE_HALT_KEY) {
    if (tenant !== undefined) throw new UsageError("the scope 'plane' halts every tenant of the store; leave out --tenant");
    return null;
  }
  cliScope(scope);
  if (tenant === undefined) throw new UsageError(`required option '--tenant <tenant>' not specified (only the scope 'plane' takes none)`);
  return tenant;
}

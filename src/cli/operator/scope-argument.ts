import { haltScopeForms, parseHaltScope } from '../../core/halt-scope.js';
import { UsageError } from '../usage-error.js';

/**
 * A halt scope as the CLI takes it: one of the four forms, else a usage error whose message lists
 * them (`haltScopeForms()`, docs/design/rules.md#d12). Checked before the store is opened.
 */
export function cliScope(text: string): string {
  if (parseHaltScope(text) === null) throw new UsageError(`scope must be one of ${haltScopeForms()}; got ${JSON.stringify(text)}`);
  return text;
}

import { Option } from 'commander';

import { QuotaError } from '../../core/errors.js';
import { unknownTenantMessage, unknownTenantOf } from '../../core/known-tenant.js';

/** How the CLI says a tenant is new (docs/design/rules.md#l95). */
export const CLI_NEW_TENANT_HINT = 'pass --new-tenant';

/**
 * The `--new-tenant` flag of a command that may create its tenant (`halt`, `quota set`, `quota
 * update`, `keys create`): without it, a tenant with no quota and no history is refused (exit 1).
 */
export function newTenantOption(): Option {
  return new Option('--new-tenant', 'the tenant is new: create it (without this, a tenant with no quota and no history is refused as a likely typo)').default(false);
}

/**
 * `error` said the CLI's way: a refusal of a tenant that does not exist (`NOT_FOUND`, from the
 * plane or from a server) gets the CLI's sentence, naming `where` (`store sqlite:./q.db`, `server
 * http://…`) and `--new-tenant`; any other error is answered as it is.
 */
export function inCliTerms(error: unknown, where: string): unknown {
  const unknown = unknownTenantOf(error);
  if (unknown === null) return error;
  return new QuotaError('NOT_FOUND', unknownTenantMessage(unknown, CLI_NEW_TENANT_HINT, where), { details: (error as QuotaError).details, cause: error });
}

import type { Command } from 'commander';

import { HALT_SCOPE_FORMS } from '../../core/halt-scope.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { operatorText, writeAnswer } from '../operator/format.js';
import { cliHaltTenant } from '../operator/scope-argument.js';
import { UsageError } from '../usage-error.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';
import { newTenantOption } from '../operator/new-tenant.js';

interface HaltFlags extends TargetFlags {
  readonly tenant?: string;
  readonly reason: string;
  readonly newTenant: boolean;
  readonly reachesRunning: boolean;
}

/**
 * The confirmation's line about running work (docs/design/rules.md#c45): how many running runs the
 * halt reaches, or how many run on in its scope.
 */
export function runningReachText(running: number, reachesRunning: boolean): string {
  const runs = `${running} running run${running === 1 ? '' : 's'}`;
  if (reachesRunning) return `reaches ${runs}: each answers Withheld at its next heartbeat, dispatch or resume, and pauses`;
  return `${runs} in scope continue${running === 1 ? 's' : ''}: this halt stops new admissions only`;
}

/** Registers `quotaplane halt <scope> --tenant T --reason R`. */
export function registerHalt(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'halt', io, 'writes')
    .summary('throw an emergency halt on a scope of a tenant (audited)')
    .description(
      'Throw (or re-throw, replacing) a halt on one of the scopes\n' +
        `  ${HALT_SCOPE_FORMS.join('\n  ')}\n` +
        'Tenant, agent and revision halts stop admission; with --reaches-running they also\n' +
        'withhold the running runs they cover (their next heartbeat, dispatch or resume\n' +
        'answers Withheld, and they pause). A subject halt always withholds running work\n' +
        'whose delegation chain holds the principal. The answer counts the runs in the\n' +
        'scope running once the halt stands. The audit row is\n' +
        'written before the halt stands. A tenant with no quota and no history is\n' +
        'refused (exit 1, naming the nearest known tenant) unless --new-tenant says it is new.\n' +
        "The scope 'plane' (no --tenant) halts every tenant of the store at once: audited on\n" +
        "the quotaplane:plane chain, listed by halts and status, ended with 'lift plane'.",
    )
    .argument('<scope>', 'what to stop: tenant, agent:<name>, revision:<digest>, subject:<principal>, or plane (every tenant)')
    .option('--tenant <tenant>', 'the tenant (required, but for the scope plane)', tenantName)
    .requiredOption('--reason <text>', 'why; shown in every refusal the halt causes')
    .addOption(newTenantOption())
    .option('--reaches-running', 'also withhold the running runs the halt covers (default: new admissions only)', false)
    .action(async (scope: string, flags: HaltFlags) => {
      const tenant = cliHaltTenant(scope, flags.tenant);
      if (tenant === null && flags.newTenant) throw new UsageError("the scope 'plane' names no tenant, so --new-tenant has nothing to create; leave it out");
      const reach = flags.reachesRunning ? { reachesRunning: true } : {};
      const result = await withTarget(flags, 'writes', (target) =>
        tenant === null
          ? target.haltPlane({ reason: flags.reason, ...reach })
          : target.halt({ tenant, scope, reason: flags.reason, newTenant: flags.newTenant, ...reach }),
      );
      const what = tenant === null ? 'every tenant (plane)' : `${result.scope} of tenant '${tenant}'`;
      writeAnswer(io, flags.json, { tenant, ...result }, () =>
        `halted ${what} (reaches ${result.reach}): ${result.reason}\n` +
        `by ${operatorText(result.by)} at ${instant(result.atMs)}\n` +
        `${runningReachText(result.running, result.reachesRunning)}\n`,
      );
      setExitStatus(EXIT.OK);
    });
}

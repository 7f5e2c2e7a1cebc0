import type { Command } from 'commander';

import { HALT_SCOPE_FORMS } from '../../core/halt-scope.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { operatorText, writeAnswer } from '../operator/format.js';
import { cliScope } from '../operator/scope-argument.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';
import { newTenantOption } from '../operator/new-tenant.js';

interface HaltFlags extends TargetFlags {
  readonly tenant: string;
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
        'refused (exit 1, naming the nearest known tenant) unless --new-tenant says it is new.',
    )
    .argument('<scope>', 'what to stop: tenant, agent:<name>, revision:<digest> or subject:<principal>')
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .requiredOption('--reason <text>', 'why; shown in every refusal the halt causes')
    .addOption(newTenantOption())
    .option('--reaches-running', 'also withhold the running runs the halt covers (default: new admissions only)', false)
    .action(async (scope: string, flags: HaltFlags) => {
      const key = cliScope(scope);
      const result = await withTarget(flags, 'writes', (target) =>
        target.halt({
          tenant: flags.tenant,
          scope: key,
          reason: flags.reason,
          newTenant: flags.newTenant,
          ...(flags.reachesRunning ? { reachesRunning: true } : {}),
        }),
      );
      writeAnswer(io, flags.json, { tenant: flags.tenant, ...result }, () =>
        `halted ${result.scope} of tenant '${flags.tenant}' (reaches ${result.reach}): ${result.reason}\n` +
        `by ${operatorText(result.by)} at ${instant(result.atMs)}\n` +
        `${runningReachText(result.running, result.reachesRunning)}\n`,
      );
      setExitStatus(EXIT.OK);
    });
}

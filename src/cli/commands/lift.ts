import type { Command } from 'commander';

import { HALT_SCOPE_FORMS } from '../../core/halt-scope.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { writeAnswer } from '../operator/format.js';
import { cliHaltTenant } from '../operator/scope-argument.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

/** Registers `quotaplane lift <scope> --tenant T`: journaled first, then compare-and-delete (docs/design/decisions.md "Lifting is journaled first, and everything an operator does is audited"). */
export function registerLift(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'lift', io, 'writes')
    .summary('lift the halt on a scope of a tenant (audited); exit 1 when none stood')
    .description(
      'Lift the standing halt on one of the scopes\n' +
        `  ${HALT_SCOPE_FORMS.join('\n  ')}\n` +
        'The lift is written to the audit log before the halt row goes. Exit status 1\n' +
        "when no halt stood on the scope (then nothing is written). 'lift plane' (no --tenant)\n" +
        'lifts the plane-wide halt over every tenant.',
    )
    .argument('<scope>', 'the scope whose halt to lift, or plane for the plane-wide halt')
    .option('--tenant <tenant>', 'the tenant (required, but for the scope plane)', tenantName)
    .action(async (scope: string, flags: TargetFlags & { tenant?: string }) => {
      const tenant = cliHaltTenant(scope, flags.tenant);
      const key = scope;
      const result = await withTarget(flags, 'writes', (target) =>
        tenant === null ? target.liftPlaneHalt({}) : target.lift({ tenant, scope: key }),
      );
      const of = tenant === null ? 'every tenant (plane)' : `tenant '${tenant}'`;
      writeAnswer(io, flags.json, { tenant, scope: key, ...result }, () => {
        if (!result.wasStanding) return `no halt stands on ${key} of ${of}; nothing was written\n`;
        if (!result.removed) return `the lift of ${key} (${of}) is recorded, but the halt changed meanwhile: another lift removed it or a re-throw stands\n`;
        return `lifted ${key} of ${of}\n`;
      });
      setExitStatus(result.wasStanding ? EXIT.OK : EXIT.FINDING);
    });
}

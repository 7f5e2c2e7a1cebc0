import type { Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { spendText, writeAnswer } from '../operator/format.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

/** Registers `quotaplane release <run> --tenant T`: an operator gives back a run's slot and hold (audited). */
export function registerRelease(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'release', io, 'writes')
    .summary("give back a run's slot and hold and close it as released (audited); exit 1 when it was closed already")
    .description(
      "Release a run: its slot and its spend hold are given back and the run is closed as released,\n" +
        'with an audit row naming who did it and what was held. Use it for a stranded run whose real\n' +
        'spend will never be known, or to abandon a withheld or idle run. A late settle of one of its\n' +
        'passes still books that pass\'s spend. Exit status 1 when the run was concluded or released\n' +
        'already (nothing is written).',
    )
    .argument('<run>', 'the run id')
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .action(async (run: string, flags: TargetFlags & { tenant: string }) => {
      const outcome = await withTarget(flags, 'writes', (target) => target.release({ tenant: flags.tenant, run }));
      writeAnswer(io, flags.json, { tenant: flags.tenant, ...outcome }, () => {
        if (outcome.outcome === 'already-closed') {
          return `run '${outcome.run}' of tenant '${flags.tenant}' is ${outcome.previousStatus ?? 'closed'} already; nothing was written\n`;
        }
        const held = [
          outcome.slotReleased ? 'its slot' : null,
          outcome.holdReleased === null ? null : `its hold of ${spendText(outcome.holdReleased.remaining)} in ${outcome.holdReleased.period}`,
        ].filter((part) => part !== null);
        return (
          `released run '${outcome.run}' of tenant '${flags.tenant}' (was ${outcome.previousStatus ?? 'unregistered'}): ` +
          `${held.length === 0 ? 'it held nothing' : `gave back ${held.join(' and ')}`}; audit row ${outcome.audit?.seq ?? '-'}\n`
        );
      });
      setExitStatus(outcome.outcome === 'released' ? EXIT.OK : EXIT.FINDING);
    });
}

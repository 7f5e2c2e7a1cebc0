import { Option, type Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { writeAnswer } from '../operator/format.js';
import { operatorCommand, requireKnownTenant, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

/** Registers `quotaplane sweep [--tenant T]`: one sweep of lapsed leases (docs/design/decisions.md "A dead process strands its run"). */
export function registerSweep(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'sweep', io, 'reads')
    .summary('sweep lapsed leases once: free the slots of dead runs, keep their holds')
    .description(
      'Run one sweep: every run that holds a slot or is running, with no pass whose lease is still\n' +
        'live, gets its slot released and (when running) is marked stranded; its hold is kept, since\n' +
        'what it spent is unknown. One transaction per run, so an interrupted sweep loses nothing.\n' +
        "`quotaplane serve` sweeps on an interval; this is for stores without a server, or to act now.",
    )
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .action(async (flags: TargetFlags & { tenant?: string }) => {
      const result = await withTarget(flags, 'reads', async (target) => {
        if (flags.tenant !== undefined) await requireKnownTenant(target, flags.tenant);
        return target.sweep({ tenant: flags.tenant });
      });
      writeAnswer(io, flags.json, result, () => {
        if (result.swept.length === 0) return `nothing to sweep at ${instant(result.atMs)}\n`;
        const lines = result.swept.map((run) => {
          const done = [run.releasedSlot ? 'slot released' : null, run.stranded ? 'stranded' : null].filter((part) => part !== null);
          return `  ${run.tenant}  ${run.run}  ${done.join(', ')}`;
        });
        return `swept ${result.swept.length} run(s) at ${instant(result.atMs)}:\n${lines.join('\n')}\n`;
      });
      setExitStatus(EXIT.OK);
    });
}

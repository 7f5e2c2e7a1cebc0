import { Option, type Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { amount, wholeNumber, tenantName } from '../options.js';
import { spendText, writeAnswer } from '../operator/format.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';

interface SettleFlags extends TargetFlags {
  readonly tenant: string;
  readonly epoch: number;
  readonly tokens: number;
  readonly minorUnits: number;
  readonly conclude: boolean;
}

/** Registers `quotaplane settle <run> --tenant T --epoch E --tokens N --minor-units M [--conclude]` (audited). */
export function registerSettle(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'settle', io, 'writes')
    .summary("settle a pass's real spend for a runner that cannot (audited)")
    .description(
      'Settle pass <epoch> of a run with what it really spent: its spend accrues to the period the pass\n' +
        'started in, and the hold shrinks by it (or, with --conclude, the run concludes and the rest of\n' +
        'its hold is given back). A pass settles once: the same settle again changes nothing, and a\n' +
        'different one is refused (exit status 1). Audited as run.settle when it writes the receipt.',
    )
    .argument('<run>', 'the run id')
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .addOption(new Option('--epoch <epoch>', 'the pass to settle').argParser(wholeNumber(1)).makeOptionMandatory())
    .addOption(new Option('--tokens <tokens>', 'tokens the pass spent').argParser(amount).makeOptionMandatory())
    .addOption(new Option('--minor-units <minorUnits>', 'money the pass spent, in minor units').argParser(amount).makeOptionMandatory())
    .addOption(new Option('--conclude', 'the run is over: give back the rest of its hold').default(false))
    .action(async (run: string, flags: SettleFlags) => {
      const spend = { tokens: flags.tokens, minorUnits: flags.minorUnits };
      const result = await withTarget(flags, 'writes', (target) =>
        target.settle({ tenant: flags.tenant, run, epoch: flags.epoch, spend, concludes: flags.conclude }),
      );
      writeAnswer(io, flags.json, { tenant: flags.tenant, outcome: result.outcome, receipt: result.receipt }, () => {
        const what = `pass ${result.receipt.epoch} of run '${result.receipt.run}' (tenant '${flags.tenant}')`;
        const booked = `${spendText(result.receipt.spend)} in ${result.receipt.period ?? 'no period'}${result.receipt.concludes ? ', concluding the run' : ''}`;
        return result.outcome === 'settled' ? `settled ${what}: ${booked}\n` : `${what} was settled already with the same receipt (${booked}); nothing changed\n`;
      });
      setExitStatus(EXIT.OK);
    });
}

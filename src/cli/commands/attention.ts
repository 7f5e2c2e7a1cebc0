import { Option, type Command } from 'commander';

import { DEFAULT_HOLD_STALE_AFTER_MS } from '../../plane/operator-types.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { amount, tenantName } from '../options.js';
import { instant } from '../../core/instant.js';
import { duration, writeAnswer } from '../operator/format.js';
import { limitOption, operatorCommand, requireKnownTenant, withTarget, type TargetFlags, remedyTargetFlags } from '../operator/target-options.js';

interface AttentionFlags extends TargetFlags {
  readonly tenant?: string;
  readonly limit: number;
  readonly holdStaleAfterMs: number;
}

/** Registers `quotaplane attention [--tenant T] [--limit N] [--hold-stale-after-ms MS]`. */
export function registerAttention(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'attention', io, 'reads')
    .summary('does anything need a person now? exit 1 when it does')
    .description(
      'List the runs that need a person, once each with every condition of the run, how long it has\n' +
        'stood and the commands that end them (--json also lists each condition on its own):\n' +
        '  run.stranded    its process died (lease lapsed): settle the real spend, or release it\n' +
        '  run.withheld    a subject halt withheld it: lift the halt and resume, or release it\n' +
        '  hold.stale      a paused run kept its hold past --hold-stale-after-ms: resume and conclude, or release\n' +
        '  pass.unsettled  a pass lost its lease and never settled: settle it\n' +
        '  run.overran     a pass settled more than its hold\n' +
        '  spend.overrun   the current period is over its ceiling (by how much, which runs overran)\n' +
        'Exit status 1 when any condition stands (5 when --limit cut the list).',
    )
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .addOption(limitOption())
    .addOption(
      new Option('--hold-stale-after-ms <ms>', 'how long a paused run may keep a hold before it is stale')
        .argParser(amount)
        .default(DEFAULT_HOLD_STALE_AFTER_MS),
    )
    .action(async (flags: AttentionFlags) => {
      const report = await withTarget(flags, 'reads', async (target) => {
        if (flags.tenant !== undefined) await requireKnownTenant(target, flags.tenant);
        return target.attention({ tenant: flags.tenant, limit: flags.limit, holdStaleAfterMs: flags.holdStaleAfterMs });
      });
      // Remedies a person copies carry the flags this command was given (never a secret).
      const remedyTarget = remedyTargetFlags(flags, process.env);
      const targetFlags = (line: string): string =>
        ` ${remedyTarget.target}${/^quotaplane (release|settle|lift|halt) /.test(line) && remedyTarget.writes !== '' ? ` ${remedyTarget.writes}` : ''}`;
      writeAnswer(io, flags.json, report, () => {
        if (!report.needsAttention) return `nothing needs attention (${instant(report.atMs)})\n`;
        // One block per run, with every reason it needs a person (a dead process's run is both
        // stranded and unsettled, and one thing to act on).
        const blocks = report.items.map((item) => {
          const passes = item.epochs.length === 0 ? '' : ` ${item.epochs.length === 1 ? 'pass' : 'passes'} ${item.epochs.join(', ')}`;
          const run = item.run === '' ? '' : `  ${item.run}`;
          return [
            `${item.reasons.join(' + ')}  ${item.tenant}${run}${passes}  for ${duration(item.ageMs)} (since ${instant(item.sinceMs)})`,
            ...item.summaries.map((summary) => `  ${summary}`),
            `  remedy: ${item.remedy.text}`,
            ...item.remedy.cli.map((line) => `    ${line}${targetFlags(line)}`),
          ].join('\n');
        });
        const cut = report.truncated ? `\nmore conditions than --limit ${flags.limit} of kind ${report.truncatedKinds.join(', ')}\n` : '';
        return `${blocks.join('\n\n')}\n${cut}`;
      });
      setExitStatus(report.truncated ? EXIT.TRUNCATED : report.needsAttention ? EXIT.FINDING : EXIT.OK);
    });
}

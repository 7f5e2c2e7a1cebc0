import { type Command, Option } from 'commander';

import { releaseStranded, type StrandedReleaseReport, type StrandedReleaseResult } from '../../plane/release.js';
import type { ReleaseRunOutcome } from '../../store/types.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT, type ExitStatus } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { spendText, writeAnswer } from '../operator/format.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';
import { UsageError } from '../usage-error.js';

/** A bulk release reports progress on stderr once it has at least this many runs, every this many. */
const PROGRESS_EVERY = 25;

/**
 * Registers `quotaplane release <run> --tenant T` (an operator gives back a run's slot and hold,
 * audited) and `quotaplane release --stranded --tenant T` (every stranded run of the tenant, each
 * released and audited as the single release is; plane release.ts `releaseStranded`).
 */
export function registerRelease(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'release', io, 'writes')
    .summary("give back a run's slot and hold and close it as released (audited); --stranded: every stranded run of the tenant")
    .description(
      "Release a run: its slot and its spend hold are given back and the run is closed as released,\n" +
        'with an audit row naming who did it and what was held. Use it for a stranded run whose real\n' +
        'spend will never be known, or to abandon a withheld or idle run. A late settle of one of its\n' +
        'passes still books that pass\'s spend. Exit status 1 when the run was concluded or released\n' +
        'already (nothing is written).\n\n' +
        'With --stranded instead of a run: every stranded run of the tenant (at most 1000 per call),\n' +
        'each released and audited as a single release is, one after another; progress goes to stderr\n' +
        'when there are many. Each run is reported: released, skipped (closed or no longer stranded) or\n' +
        'failed (with the fault; nothing is claimed for it). Exit status 0 when every stranded run was\n' +
        'released (or none stood), 1 when any was skipped or failed, 4 when a failure was the store or\n' +
        'server not answering, 5 when more than 1000 stood (run it again).',
    )
    .argument('[run]', 'the run id (or --stranded)')
    .addOption(new Option('--stranded', 'release every stranded run of the tenant instead of one run').default(false))
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .action(async (run: string | undefined, flags: TargetFlags & { tenant: string; stranded: boolean }) => {
      if (flags.stranded && run !== undefined) throw new UsageError(`--stranded releases every stranded run; name no run (got '${run}')`);
      if (!flags.stranded && run === undefined) throw new UsageError('name the run to release, or --stranded for every stranded run of the tenant');
      if (flags.stranded) {
        const report = await withTarget(flags, 'writes', (target) =>
          releaseStranded(target, flags.tenant, {
            onProgress: (done, of) => {
              if (of >= PROGRESS_EVERY && (done % PROGRESS_EVERY === 0 || done === of)) io.stderr.write(`quotaplane release --stranded: ${done} of ${of} runs done\n`);
            },
          }),
        );
        writeAnswer(io, flags.json, report, () => strandedText(report));
        setExitStatus(strandedExitStatus(report));
        return;
      }
      const outcome = await withTarget(flags, 'writes', (target) => target.release({ tenant: flags.tenant, run: run as string }));
      writeAnswer(io, flags.json, { tenant: flags.tenant, ...outcome }, () => singleText(flags.tenant, outcome));
      setExitStatus(outcome.outcome === 'released' ? EXIT.OK : EXIT.FINDING);
    });
}

function singleText(tenant: string, outcome: ReleaseRunOutcome): string {
  if (outcome.outcome === 'already-closed') {
    return `run '${outcome.run}' of tenant '${tenant}' is ${outcome.previousStatus ?? 'closed'} already; nothing was written\n`;
  }
  return `released run '${outcome.run}' of tenant '${tenant}' (was ${outcome.previousStatus ?? 'unregistered'}): ${gaveBack(outcome)}; audit row ${outcome.audit?.seq ?? '-'}\n`;
}

function gaveBack(outcome: ReleaseRunOutcome): string {
  const held = [
    outcome.slotReleased ? 'its slot' : null,
    outcome.holdReleased === null ? null : `its hold of ${spendText(outcome.holdReleased.remaining)} in ${outcome.holdReleased.period}`,
  ].filter((part) => part !== null);
  return held.length === 0 ? 'it held nothing' : `gave back ${held.join(' and ')}`;
}

function resultLine(result: StrandedReleaseResult): string {
  switch (result.result) {
    case 'released':
      return `  released ${result.run} (was ${result.outcome.previousStatus ?? 'unregistered'}): ${gaveBack(result.outcome)}; audit row ${result.outcome.audit?.seq ?? '-'}`;
    case 'already-closed':
      return `  skipped  ${result.run}: ${result.outcome.previousStatus ?? 'closed'} already; nothing was written`;
    case 'skipped':
      return `  skipped  ${result.run}: ${result.reason}`;
    case 'failed':
      return `  FAILED   ${result.run}: ${result.error.code}: ${result.error.message} (not released)`;
  }
}

function strandedText(report: StrandedReleaseReport): string {
  if (report.results.length === 0) return `tenant '${report.tenant}' has no stranded run; nothing was written\n`;
  const lines = [
    `tenant '${report.tenant}': released ${report.released} of ${report.results.length} stranded runs` +
      `${report.failed > 0 ? `, ${report.failed} failed` : ''}${report.skipped > 0 ? `, ${report.skipped} skipped` : ''}`,
    ...report.results.map(resultLine),
  ];
  if (report.truncated) lines.push('more stranded runs stand: run it again');
  return `${lines.join('\n')}\n`;
}

function strandedExitStatus(report: StrandedReleaseReport): ExitStatus {
  if (report.results.some((result) => result.result === 'failed' && result.error.code === 'STORE_UNAVAILABLE')) return EXIT.STORE_UNREACHABLE;
  if (report.truncated) return EXIT.TRUNCATED;
  return report.failed > 0 || report.skipped > 0 ? EXIT.FINDING : EXIT.OK;
}

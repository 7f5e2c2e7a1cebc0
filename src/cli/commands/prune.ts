import { performance } from 'node:perf_hooks';

import { Option, type Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import { writeLine, type CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { duration, renderTable, writeAnswer } from '../operator/format.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { ageWithUnit, tenantName, wholeNumberBetween } from '../options.js';
import { DEFAULT_PRUNE_BATCH, type PruneProgress, type PruneResult } from '../../plane/prune-types.js';
import { MAX_PRUNE_BATCH } from '../../store/retention.js';

// A long prune reports how far it got on stderr, at most this often.
const PROGRESS_EVERY_MS = 1000;

interface PruneFlags extends TargetFlags {
  readonly olderThan: number;
  readonly tenant?: string;
  readonly dryRun: boolean;
  readonly batchSize: number;
}

/**
 * Registers `quotaplane prune --older-than DURATION [--tenant T] [--dry-run] [--batch-size N]`:
 * retention (docs/design/rules.md#r1). Removes closed runs older than the age, with their passes and
 * receipts, and rate-dispatch instants no window counts; prints what went (or, with `--dry-run`,
 * what would go). Progress goes to stderr while it works; the answer to stdout.
 */
export function registerPrune(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'prune', io, 'writes')
    .summary('remove closed runs, their passes and receipts, and spent rate instants older than an age (audited)')
    .description(
      'Retention. Removes every run that concluded or was released at least --older-than ago and\n' +
        'holds no slot and no hold (a run with a pass never settled stays, concluded or released, until\n' +
        'that pass is settled), with its passes and receipts, and the rate-dispatch instants older than both that\n' +
        'age and the widest rate window (31 days). Never touches an open run, a hold, a slot, a halt,\n' +
        'a period figure or the audit log. Each pruned run id keeps a tombstone: a settle retried\n' +
        'later is refused (CONFLICT), never counted twice. Works in batches of one transaction each,\n' +
        'each batch audited (run.prune, rate.prune), so admissions go on meanwhile and an interrupted\n' +
        'prune keeps what it finished. --dry-run counts what would go and changes nothing.\n' +
        '`quotaplane serve --prune-older-than` prunes on an interval instead.',
    )
    .requiredOption('--older-than <age>', 'the age a closed run must have, with a unit: 90d, 12h, 2w', ageWithUnit)
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .addOption(new Option('--dry-run', 'count what would go; remove nothing and write no audit row').default(false))
    .addOption(
      new Option('--batch-size <n>', `runs per transaction, 1 to ${MAX_PRUNE_BATCH}`)
        .argParser(wholeNumberBetween(1, MAX_PRUNE_BATCH))
        .default(DEFAULT_PRUNE_BATCH),
    )
    .action(async (flags: PruneFlags) => {
      let lastReportMs = performance.now();
      const onProgress = (progress: PruneProgress): void => {
        const now = performance.now();
        if (now - lastReportMs < PROGRESS_EVERY_MS) return;
        lastReportMs = now;
        writeLine(
          io.stderr,
          `${flags.dryRun ? 'counting' : 'pruning'} ${progress.tenant} (${progress.phase}): ${progress.runs} run(s), ` +
            `${progress.passes} pass(es), ${progress.receipts} receipt(s), ${progress.rateDispatches} rate instant(s) so far`,
        );
      };
      const result = await withTarget(flags, flags.dryRun ? 'reads' : 'writes', (target) =>
        target.prune({ olderThanMs: flags.olderThan, tenant: flags.tenant, dryRun: flags.dryRun, batchSize: flags.batchSize, onProgress }),
      );
      writeAnswer(io, flags.json, result, () => pruneText(result));
      setExitStatus(EXIT.OK);
    });
}

function pruneText(result: PruneResult): string {
  const verb = result.dryRun ? 'would remove' : 'removed';
  const head =
    `${result.dryRun ? 'dry run: ' : ''}runs closed at or before ${instant(result.closedAtOrBeforeMs)} ` +
    `(older than ${duration(result.olderThanMs)}), rate instants at or before ${instant(result.rateAtOrBeforeMs)}\n`;
  if (result.tenants.length === 0) return `${head}nothing to prune\n`;
  const rows = result.tenants.map((each) => [each.tenant, String(each.runs), String(each.passes), String(each.receipts), String(each.rateDispatches)]);
  const { runs, passes, receipts, rateDispatches } = result.total;
  return (
    head +
    renderTable(['TENANT', 'RUNS', 'PASSES', 'RECEIPTS', 'RATE INSTANTS'], rows) +
    `${verb} ${runs} run(s), ${passes} pass(es), ${receipts} receipt(s) and ${rateDispatches} rate instant(s)\n`
  );
}

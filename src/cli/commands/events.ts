import { Option, type Command } from 'commander';

import { thresholdLabel, type AlertThreshold } from '../../core/alert-thresholds.js';
import type { QuotaEvent } from '../../core/events.js';
import { instant } from '../../core/instant.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { renderTable, writeAnswer } from '../operator/format.js';
import { limitOption, operatorCommand, requireKnownTenant, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName, wholeNumberBetween } from '../options.js';
import { MAX_LIST_LIMIT } from '../../plane/operator-types.js';

interface EventsFlags extends TargetFlags {
  readonly tenant?: string;
  readonly after?: number;
  readonly limit: number;
  readonly last?: number;
}

// What an event says, in one line.
function summary(event: QuotaEvent): string {
  const data = event.data as Record<string, unknown>;
  const agent = typeof data.agent === 'string' ? ` (agent ${data.agent})` : '';
  const threshold = data.threshold as AlertThreshold | undefined;
  const spend = (value: unknown): string => {
    const { tokens, minorUnits } = (value ?? {}) as { tokens?: number; minorUnits?: number };
    return `${tokens ?? 0} tokens, ${minorUnits ?? 0} minor units`;
  };
  const actor = (value: unknown): string => String((value as { actor?: string } | null | undefined)?.actor ?? 'someone');
  switch (event.type) {
    case 'threshold.crossed':
      return `settled ${String(data.settled)} ${String(data.unit)} reached ${threshold === undefined ? '?' : thresholdLabel(threshold)} (${String(data.thresholdAmount)}) of ceiling ${String(data.ceiling ?? 'none')} in ${String(data.period)}${agent}`;
    case 'ceiling.reached':
      return `settled ${String(data.settled)} ${String(data.unit)} reached the ceiling ${String(data.ceiling)} in ${String(data.period)}${agent}`;
    case 'run.overran':
      return `run ${String(data.run)} pass ${String(data.epoch)}${agent} settled ${spend(data.spend)}, over its hold of ${spend(data.hold)} by ${spend(data.overrun)}`;
    case 'run.stranded':
      return `run ${String(data.run)} stranded: the lease of pass ${String(data.epoch)} lapsed at ${instant(Number(data.leaseExpiredAtMs))}`;
    case 'halt.set':
      return `halt on ${String(data.scope)} thrown by ${actor(data.by)}: ${String(data.reason)}`;
    case 'halt.lifted':
      return `halt on ${String(data.scope)} lifted by ${actor(data.liftedBy)}`;
  }
}

/** Registers `quotaplane events [--tenant T] [--after SEQ] [--limit N]`. */
export function registerEvents(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'events', io, 'reads')
    .summary('list the event log after a cursor: spend thresholds crossed, ceilings reached, overruns, stranded runs, halts')
    .description(
      'List the events after --after (a seq; 0, the default: from the first), oldest first, each once:\n' +
        'threshold.crossed, ceiling.reached, run.overran, run.stranded, halt.set, halt.lifted. An event id\n' +
        'is derived from what it is about, the same on every instance and retry. Ask again with\n' +
        '--after set to the "next" cursor printed last to read on from there.',
    )
    .addOption(new Option('--tenant <tenant>', "one tenant's events (default: every tenant's and the plane's)").argParser(tenantName))
    .addOption(new Option('--after <seq>', 'read the events after this seq (default: 0, from the first)').argParser(wholeNumberBetween(0, Number.MAX_SAFE_INTEGER)).conflicts('last'))
    .addOption(new Option('--last <n>', `instead: the newest n events (up to ${MAX_LIST_LIMIT})`).argParser(wholeNumberBetween(1, MAX_LIST_LIMIT)))
    .addOption(limitOption())
    .action(async (flags: EventsFlags) => {
      const status = await withTarget(flags, 'reads', async (target) => {
        if (flags.tenant !== undefined) await requireKnownTenant(target, flags.tenant);
        const page = await target.events(
          flags.last === undefined ? { tenant: flags.tenant, after: flags.after ?? 0, limit: flags.limit } : { tenant: flags.tenant, last: flags.last },
        );
        writeAnswer(io, flags.json, page, () => {
          if (page.events.length === 0) return flags.last === undefined ? `no events after ${flags.after ?? 0}\n` : 'no events\n';
          const rows = page.events.map((event) => [String(event.seq), instant(event.atMs), event.tenant ?? '*', event.type, event.id, summary(event)]);
          const more = page.truncated ? ' (more follow)' : '';
          return `${renderTable(['SEQ', 'AT', 'TENANT', 'TYPE', 'ID', 'WHAT'], rows)}next: --after ${page.next}${more}\n`;
        });
        return page.truncated ? EXIT.TRUNCATED : EXIT.OK;
      });
      setExitStatus(status);
    });
}

import { Option, type Command } from 'commander';

import { describeHaltScope, haltReachesRunning, haltScopeKey, PLANE_HALT_KEY } from '../../core/halt-scope.js';
import { planeOrNull } from '../operator/plane-reads.js';
import type { LiftedHalt } from '../../plane/lifted-halts.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { operatorText, renderTable, writeAnswer } from '../operator/format.js';
import { limitOption, operatorCommand, tenantsOf, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

interface HaltsFlags extends TargetFlags {
  readonly tenant?: string;
  readonly lifted: boolean;
  readonly limit: number;
}

/** Registers `quotaplane halts [--tenant T] [--lifted] [--limit N]`. */
export function registerHalts(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'halts', io, 'reads')
    .summary('list standing halts, or with --lifted the recorded lifts (newest first)')
    .description(
      'List the standing halts of one tenant or of every tenant, the plane-wide halt first (tenant *,\n' +
        'scope plane; in --json its own member plane, null when none stands): scope, what it covers, what it\n' +
        'reaches (admission, or admission and running work), reason, who\n' +
        'threw it and when. With --lifted, list the lifts recorded in the audit log instead, newest\n' +
        'first: who lifted which halt and when, and who had thrown it.',
    )
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .addOption(new Option('--lifted', 'list recorded lifts instead of standing halts').default(false))
    .addOption(limitOption())
    .action(async (flags: HaltsFlags) => {
      const truncated = await withTarget(flags, 'reads', async (target) => {
        const tenants = await tenantsOf(target, flags.tenant);
        if (flags.lifted) {
          const lifted: (LiftedHalt & { tenant: string })[] = [];
          let cut = false;
          for (const tenant of tenants) {
            const page = await target.liftedHalts({ tenant, limit: flags.limit });
            cut ||= page.truncated;
            lifted.push(...page.lifted.map((item) => ({ tenant, ...item })));
          }
          lifted.sort((a, b) => b.liftedAtMs - a.liftedAtMs || a.tenant.localeCompare(b.tenant) || b.seq - a.seq);
          cut ||= lifted.length > flags.limit;
          const shown = lifted.slice(0, flags.limit);
          writeAnswer(io, flags.json, { lifted: shown, truncated: cut }, () =>
            shown.length === 0
              ? 'no lifts recorded\n'
              : renderTable(
                  ['TENANT', 'SCOPE', 'LIFTED', 'LIFTED BY', 'REASON', 'THROWN BY', 'THROWN'],
                  shown.map((row) => [
                    row.tenant,
                    row.scope,
                    instant(row.liftedAtMs),
                    operatorText(row.by),
                    row.reason,
                    operatorText(row.thrownBy),
                    instant(row.thrownAtMs),
                  ]),
                ),
          );
          return cut;
        }
        const standing = [];
        for (const tenant of tenants) {
          for (const halt of await target.halts(tenant)) {
            standing.push({
              tenant,
              scope: haltScopeKey(halt.scope),
              covers: describeHaltScope(halt.scope),
              reachesRunning: haltReachesRunning(halt),
              reason: halt.reason,
              by: halt.by,
              atMs: halt.atMs,
            });
          }
        }
        // The plane-wide halt stops every tenant listed (docs/design/rules.md#c51); a key that does
        // not cover every tenant cannot read it, and sees null.
        const planeHalt = (await planeOrNull(target))?.halt ?? null;
        const plane =
          planeHalt === null
            ? null
            : { scope: PLANE_HALT_KEY, covers: describeHaltScope({ kind: 'plane' }), ...planeHalt };
        const shown = standing.slice(0, flags.limit);
        const cut = standing.length > flags.limit;
        const rows = [...(plane === null ? [] : [{ tenant: '*', ...plane }]), ...shown];
        writeAnswer(io, flags.json, { plane, halts: shown, truncated: cut }, () =>
          rows.length === 0
            ? 'no halt stands\n'
            : renderTable(
                ['TENANT', 'SCOPE', 'COVERS', 'REACHES', 'REASON', 'BY', 'SINCE'],
                rows.map((row) => [
                  row.tenant,
                  row.scope,
                  row.covers,
                  row.reachesRunning ? 'admission and running work' : 'admission',
                  row.reason,
                  operatorText(row.by),
                  instant(row.atMs),
                ]),
              ),
        );
        return cut;
      });
      setExitStatus(truncated ? EXIT.TRUNCATED : EXIT.OK);
    });
}

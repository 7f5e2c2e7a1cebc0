import { Option, type Command } from 'commander';

import { haltScopeKey } from '../../core/halt-scope.js';
import type { Operator } from '../../core/operator.js';
import type { TenantQuota } from '../../core/quota.js';
import type { PlaneStatus, Usage } from '../../plane/plane.js';
import { DEFAULT_HOLD_STALE_AFTER_MS, MAX_LIST_LIMIT } from '../../plane/operator-types.js';
import type { OperatorTarget } from '../operator/operator-target.js';
import { planeStatusText } from './quota-plane.js';
import { planeOrNull } from '../operator/plane-reads.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { operatorText, writeAnswer } from '../operator/format.js';
import { operatorCommand, tenantsOf, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

const limitText = (limit: number | undefined): string => (limit === undefined ? 'unlimited' : `limit ${limit}`);

function ceilings(quota: TenantQuota | null): Record<string, number | null> {
  return {
    maxConcurrentRuns: quota?.maxConcurrentRuns ?? null,
    maxTokensPerPeriod: quota?.maxTokensPerPeriod ?? null,
    maxMinorUnitsPerPeriod: quota?.maxMinorUnitsPerPeriod ?? null,
  };
}

/** By how much a period's settled spend is over its ceilings (docs/design/rules.md#l90), or `null` when within. */
interface OverCeiling {
  readonly tokens: number;
  readonly minorUnits: number;
}

/** What needs a person in a tenant (`quotaplane attention`): its conditions, and the runs stranded among them. */
interface AttentionCounts {
  readonly conditions: number;
  readonly stranded: number;
  /** More conditions stand than were counted (at most 1000 are). */
  readonly truncated: boolean;
}

async function attentionCounts(target: OperatorTarget, tenant: string): Promise<AttentionCounts> {
  const report = await target.attention({ tenant, limit: MAX_LIST_LIMIT, holdStaleAfterMs: DEFAULT_HOLD_STALE_AFTER_MS });
  return {
    conditions: report.conditions.length,
    stranded: report.conditions.filter((condition) => condition.kind === 'run.stranded').length,
    truncated: report.truncated,
  };
}

function overCeiling(usage: Usage): OverCeiling | null {
  const q = usage.quota;
  const tokens = q?.maxTokensPerPeriod === undefined ? 0 : Math.max(0, usage.spent.tokens - q.maxTokensPerPeriod);
  const minorUnits = q?.maxMinorUnitsPerPeriod === undefined ? 0 : Math.max(0, usage.spent.minorUnits - q.maxMinorUnitsPerPeriod);
  return tokens === 0 && minorUnits === 0 ? null : { tokens, minorUnits };
}

// A plane-wide ceiling that bounds nothing and weighs no tenant: none at all, or `{}`.
function setsNothing(ceiling: PlaneStatus['ceiling']): boolean {
  if (ceiling === null) return true;
  return ceiling.maxConcurrentRuns === undefined && Object.keys(ceiling.agents ?? {}).length === 0 && Object.keys(ceiling.weights ?? {}).length === 0;
}

/** Registers `quotaplane status [--tenant T]`: ceilings, running, spent and reserved this period, standing halts. */
export function registerStatus(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'status', io, 'reads')
    .summary("a tenant's ceilings, running runs, spend this period and standing halts")
    .description(
      'For one tenant or every tenant: the quota (absent ceilings are unlimited), the runs holding a\n' +
        'slot (and per agent where the quota sets agent ceilings), the admissions waiting for one (how many, and the oldest wait), the spend settled and reserved in the current billing period (marked OVER CEILING, with by ' +
        'how much, when settled spend passed a ceiling), how many conditions need a person and how many runs are stranded (see attention), and the standing halts; first, the plane-wide ceiling with every tenant’s running slots against it. ' +
        'A --tenant the store has never seen is said so on stderr (exit status 1), not shown as a tenant without ceilings.',
    )
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .action(async (flags: TargetFlags & { tenant?: string }) => {
      await withTarget(flags, 'reads', async (target) => {
        const tenants: (Usage & {
          ceilings: Record<string, number | null>;
          overCeiling: OverCeiling | null;
          halts: { scope: string; reason: string; by: Operator; atMs: number }[];
          attention: AttentionCounts;
        })[] = [];
        // A tenant the store has never seen would read as one with no ceilings: tenantsOf refuses it.
        for (const tenant of await tenantsOf(target, flags.tenant)) {
          const usage = await target.usage(tenant);
          const halts = (await target.halts(tenant)).map((halt) => ({ scope: haltScopeKey(halt.scope), reason: halt.reason, by: halt.by, atMs: halt.atMs }));
          tenants.push({ ...usage, ceilings: ceilings(usage.quota), overCeiling: overCeiling(usage), halts, attention: await attentionCounts(target, tenant) });
        }
        // Shown only while a plane-wide ceiling sets something or the plane-wide halt stands
        // (docs/design/rules.md#c51): without either, status reads as it always did.
        const planeStatus = await planeOrNull(target);
        const plane = planeStatus === null || (setsNothing(planeStatus.ceiling) && planeStatus.halt === null) ? null : planeStatus;
        writeAnswer(io, flags.json, plane === null ? { tenants } : { tenants, plane }, () => {
          const planeBlock = plane === null ? '' : `${planeStatusText(plane)}\n`;
          if (tenants.length === 0) return `${planeBlock}no tenants\n`;
          const blocks = tenants.map((t) => {
            const q = t.quota;
            const lines = [
              `tenant ${t.tenant} (period ${t.period}, ${q?.period ?? 'monthly'})`,
              `  running       ${t.running} (${limitText(q?.maxConcurrentRuns)})`,
              `  tokens        settled ${t.spent.tokens}, reserved ${t.reserved.tokens} (${limitText(q?.maxTokensPerPeriod)})`,
              `  minor units   settled ${t.spent.minorUnits}, reserved ${t.reserved.minorUnits} (${limitText(q?.maxMinorUnitsPerPeriod)})`,
            ];
            for (const agent of t.agents ?? []) {
              const c = agent.ceilings;
              lines.push(
                `  agent ${agent.agent}  running ${agent.running} (${limitText(c.maxConcurrentRuns)}), tokens settled ${agent.spent.tokens}, ` +
                  `reserved ${agent.reserved.tokens} (${limitText(c.maxTokensPerPeriod)}), minor units settled ${agent.spent.minorUnits}, ` +
                  `reserved ${agent.reserved.minorUnits} (${limitText(c.maxMinorUnitsPerPeriod)})`,
              );
            }
            if (t.queue.depth > 0) lines.push(`  waiting       ${t.queue.depth} admission(s), the oldest for ${t.queue.oldestWaitMs ?? 0} ms`);
            if (t.overCeiling !== null) {
              lines.push(`  OVER CEILING  by ${t.overCeiling.tokens} tokens, ${t.overCeiling.minorUnits} minor units (see attention: spend.overrun)`);
            }
            const a = t.attention;
            lines.push(
              a.conditions === 0
                ? '  attention     none'
                : `  attention     ${a.conditions}${a.truncated ? '+' : ''} condition(s), ${a.stranded} run(s) stranded: see quotaplane attention --tenant ${t.tenant}`,
            );
            if (t.halts.length === 0) lines.push('  halts         none');
            for (const halt of t.halts) lines.push(`  halt          ${halt.scope}: ${halt.reason} (${operatorText(halt.by)}, ${instant(halt.atMs)})`);
            return lines.join('\n');
          });
          return `${planeBlock}${blocks.join('\n\n')}\n`;
        });
      });
      setExitStatus(EXIT.OK);
    });
}

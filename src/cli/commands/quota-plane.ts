import { Option, type Command } from 'commander';

import { alertOption, alertThresholdsOf, alertThresholdsText } from '../alert-option.js';

import { parsePlaneCeiling, type PlaneCeiling } from '../../core/plane-ceiling.js';
import type { PlanePatch, PlaneStatus } from '../../plane/plane.js';
import { outputFor, type SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { amount, amountOrUnlimited } from '../options.js';
import { operatorText, writeAnswer } from '../operator/format.js';
import { instant } from '../../core/instant.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { UsageError } from '../usage-error.js';

const PAIR = /^(.+)=([^=]+)$/;

/** `<name>=<value>` flags, collected into a list (repeatable). */
export function collectPair(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * The `<name>=<value>` pairs of a repeatable flag as a map, each value an amount, or (when
 * `removable`) `unlimited`/`none` for `null`. A malformed pair is a usage error naming the flag.
 */
export function pairsOf(flag: string, values: readonly string[], removable: boolean): Record<string, number | null> {
  const result: Record<string, number | null> = {};
  for (const value of values) {
    const match = PAIR.exec(value);
    const [, name = '', text = ''] = match ?? [];
    const word = text.trim();
    const parsed =
      removable && (word === 'unlimited' || word === 'none') ? null : /^\d+$/.test(word) && Number.isSafeInteger(Number(word)) ? Number(word) : undefined;
    if (match === null || parsed === undefined) {
      throw new UsageError(
        `${flag} must look like <name>=<whole number>${removable ? " (or <name>=unlimited to remove it)" : ''}; got ${JSON.stringify(value)}`,
      );
    }
    Object.defineProperty(result, name, { value: parsed, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

const limitText = (limit: number | null | undefined): string => (limit === null || limit === undefined ? 'unlimited' : String(limit));

function ceilingText(ceiling: PlaneCeiling | null): string[] {
  if (ceiling === null) return ['no plane-wide ceiling is set: only each tenant’s own quota bounds its runs'];
  const lines = [`max concurrent runs (all tenants)  ${limitText(ceiling.maxConcurrentRuns)}`];
  for (const [agent, limit] of Object.entries(ceiling.agents ?? {})) lines.push(`agent ${agent}  max concurrent runs ${limitText(limit.maxConcurrentRuns)}`);
  for (const [tenant, weight] of Object.entries(ceiling.weights ?? {})) lines.push(`weight of tenant ${tenant}  ${weight} (share of freed slots for waiting admissions)`);
  if (ceiling.alertThresholds !== undefined) lines.push(`default alert thresholds  ${alertThresholdsText(ceiling.alertThresholds)}`);
  return lines;
}

/** The text of `quota plane show` and of the plane block of `status`. */
export function planeStatusText(status: PlaneStatus): string {
  const lines = ['plane (every tenant)', ...ceilingText(status.ceiling).map((line) => `  ${line}`)];
  if (status.running !== null) lines.push(`  running (all tenants)  ${status.running} (${status.limit === null ? 'unlimited' : `limit ${status.limit}`})`);
  for (const agent of status.agents) lines.push(`  running agent ${agent.agent}  ${agent.running} (${agent.limit === null ? 'unlimited' : `limit ${agent.limit}`})`);
  const halt = status.halt;
  if (halt !== undefined && halt !== null) {
    const reach = halt.reachesRunning ? 'admission and running work' : 'admission';
    lines.push(`  halt          plane: ${halt.reason} (${operatorText(halt.by)}, ${instant(halt.atMs)}; reaches ${reach})`);
  }
  return `${lines.join('\n')}\n`;
}

interface PlaneSetFlags extends TargetFlags {
  readonly maxConcurrentRuns?: number;
  readonly agentRuns: string[];
  readonly weight: string[];
  readonly alert: string[];
}

interface PlaneUpdateFlags extends TargetFlags {
  readonly maxConcurrentRuns?: number | 'unlimited';
  readonly agentRuns: string[];
  readonly weight: string[];
  readonly alert: string[];
}

/**
 * Registers `quotaplane quota plane show|set|update` (docs/design/rules.md#k3): the plane-wide ceiling over every
 * tenant, read with its current usage, replaced, or changed in part; both writes are audited in
 * the `quotaplane:plane` chain.
 */
export function registerQuotaPlane(quota: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  const plane = quota
    .command('plane')
    .summary('read, replace or change part of the plane-wide ceiling (every tenant together)')
    .description(
      'The plane-wide ceiling bounds the concurrent runs of every tenant together, and optionally of one agent name across ' +
        'every tenant; an admission needs room under it and under its tenant’s quota. Weights are each tenant’s share of ' +
        'freed slots for waiting admissions.',
    )
    .configureOutput(outputFor(io, 'quotaplane quota plane --help'));
  operatorCommand(plane, 'show', io, 'reads')
    .summary('print the plane-wide ceiling and the running slots against it')
    .action(async (flags: TargetFlags) => {
      const status = await withTarget(flags, 'reads', (target) => target.planeStatus());
      writeAnswer(io, flags.json, status, () => planeStatusText(status));
      setExitStatus(EXIT.OK);
    });
  operatorCommand(plane, 'set', io, 'writes')
    .summary('replace the plane-wide ceiling as a whole (audited as plane.set)')
    .description('A ceiling not given is unlimited, 0 allows nothing. It applies to the next admission of every tenant on every instance.')
    .addOption(new Option('--max-concurrent-runs <runs>', 'concurrent runs of every tenant together').argParser(amount))
    .addOption(new Option('--agent-runs <agent=runs>', "concurrent runs of one agent name across every tenant (repeatable)").argParser(collectPair).default([]))
    .addOption(new Option('--weight <tenant=weight>', "a tenant's share of freed slots for waiting admissions, at least 1 (repeatable)").argParser(collectPair).default([]))
    .addOption(alertOption(false))
    .action(async (flags: PlaneSetFlags) => {
      const agents = Object.fromEntries(Object.entries(pairsOf('--agent-runs', flags.agentRuns, false)).map(([agent, runs]) => [agent, { maxConcurrentRuns: runs }]));
      const next = parsePlaneCeiling(
        { maxConcurrentRuns: flags.maxConcurrentRuns, agents, weights: pairsOf('--weight', flags.weight, false), alertThresholds: alertThresholdsOf(flags.alert, false) },
        'plane',
      );
      const stored = await withTarget(flags, 'writes', (target) => target.setPlaneCeiling(next));
      writeAnswer(io, flags.json, { ceiling: stored }, () => `set the plane-wide ceiling:\n${ceilingText(stored).map((line) => `  ${line}`).join('\n')}\n`);
      setExitStatus(EXIT.OK);
    });
  operatorCommand(plane, 'update', io, 'writes')
    .summary('change part of the plane-wide ceiling, keeping the rest (audited as plane.update)')
    .description("Change only what is given; 'unlimited' removes a ceiling (or a weight).")
    .addOption(new Option('--max-concurrent-runs <runs|unlimited>', 'concurrent runs of every tenant together').argParser(amountOrUnlimited))
    .addOption(new Option('--agent-runs <agent=runs|agent=unlimited>', 'one agent’s plane-wide ceiling (repeatable)').argParser(collectPair).default([]))
    .addOption(new Option('--weight <tenant=weight|tenant=unlimited>', "a tenant's weight; unlimited removes it (repeatable)").argParser(collectPair).default([]))
    .addOption(alertOption(true))
    .action(async (flags: PlaneUpdateFlags) => {
      const patch: { -readonly [K in keyof PlanePatch]: PlanePatch[K] } = {};
      if (flags.maxConcurrentRuns !== undefined) patch.maxConcurrentRuns = flags.maxConcurrentRuns === 'unlimited' ? null : flags.maxConcurrentRuns;
      if (flags.agentRuns.length > 0) {
        patch.agents = Object.fromEntries(
          Object.entries(pairsOf('--agent-runs', flags.agentRuns, true)).map(([agent, runs]) => [agent, runs === null ? null : { maxConcurrentRuns: runs }]),
        );
      }
      if (flags.weight.length > 0) patch.weights = pairsOf('--weight', flags.weight, true);
      const alerts = alertThresholdsOf(flags.alert, true);
      if (alerts !== undefined) patch.alertThresholds = alerts;
      if (Object.keys(patch).length === 0) throw new UsageError('quota plane update: name at least one change (--max-concurrent-runs, --agent-runs, --weight or --alert)');
      const stored = await withTarget(flags, 'writes', (target) => target.updatePlaneCeiling(patch));
      writeAnswer(io, flags.json, { ceiling: stored }, () => `updated the plane-wide ceiling:\n${ceilingText(stored).map((line) => `  ${line}`).join('\n')}\n`);
      setExitStatus(EXIT.OK);
    });
}

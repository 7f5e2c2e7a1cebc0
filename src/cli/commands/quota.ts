import { Option, type Command } from 'commander';

import { parseQuota, type TenantQuota } from '../../core/quota.js';
import type { QuotaPatch } from '../../core/quota-patch.js';
import { alertOption, alertThresholdsOf, alertThresholdsText } from '../alert-option.js';
import type { RateCeiling } from '../../core/rate.js';
import { outputFor, type SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { amount, amountOrUnlimited, tenantName } from '../options.js';
import { labelledLines, writeAnswer } from '../operator/format.js';
import { newTenantOption } from '../operator/new-tenant.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { UsageError } from '../usage-error.js';
import { collectPair, pairsOf, registerQuotaPlane } from './quota-plane.js';

const AGENT_FLAGS = [
  ['--agent-runs', 'agentRuns', 'maxConcurrentRuns'],
  ['--agent-tokens', 'agentTokens', 'maxTokensPerPeriod'],
  ['--agent-minor-units', 'agentMinorUnits', 'maxMinorUnitsPerPeriod'],
] as const;

interface AgentFlags {
  readonly agentRuns: string[];
  readonly agentTokens: string[];
  readonly agentMinorUnits: string[];
}

// Per-agent ceilings from the --agent-* flags: agent → { ceiling: value }; with
// `removable`, `unlimited` gives null (a merge patch then removes that ceiling).
function agentCeilingsOf(flags: AgentFlags, removable: boolean): Record<string, Record<string, number | null>> | undefined {
  const agents: Record<string, Record<string, number | null>> = {};
  for (const [flag, key, ceiling] of AGENT_FLAGS) {
    for (const [agent, value] of Object.entries(pairsOf(flag, flags[key], removable))) {
      if (!Object.hasOwn(agents, agent)) Object.defineProperty(agents, agent, { value: {}, enumerable: true, writable: true, configurable: true });
      (agents[agent] as Record<string, number | null>)[ceiling] = value;
    }
  }
  return Object.keys(agents).length === 0 ? undefined : agents;
}

function withAgentOptions(command: Command, removable: boolean): Command {
  const suffix = removable ? ' (agent=unlimited removes it; repeatable)' : ' (repeatable)';
  return command
    .addOption(new Option(`--agent-runs <agent=runs>`, `concurrent-run ceiling of one agent in this tenant${suffix}`).argParser(collectPair).default([]))
    .addOption(new Option(`--agent-tokens <agent=tokens>`, `token ceiling per period of one agent in this tenant${suffix}`).argParser(collectPair).default([]))
    .addOption(
      new Option(`--agent-minor-units <agent=minorUnits>`, `money ceiling per period of one agent in this tenant, in minor units${suffix}`)
        .argParser(collectPair)
        .default([]),
    );
}

interface QuotaSetFlags extends TargetFlags, AgentFlags {
  readonly tenant: string;
  readonly newTenant: boolean;
  readonly period: 'monthly' | 'daily';
  readonly maxConcurrentRuns?: number;
  readonly maxTokensPerPeriod?: number;
  readonly maxMinorUnitsPerPeriod?: number;
  readonly rate: string[];
  readonly alert: string[];
}

const RATE_FORM = /^(.+)=(\d+)\/(\d+)$/;

/** `<grant>=<count>/<windowSeconds>`, e.g. `tool://payments/refund=20/3600`, collected into a list. */
function rateCeiling(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function rateCeilings(values: readonly string[]): Record<string, RateCeiling[]> | undefined {
  if (values.length === 0) return undefined;
  const ceilings: Record<string, RateCeiling[]> = {};
  for (const value of values) {
    const match = RATE_FORM.exec(value);
    if (match === null) throw new UsageError(`--rate must look like <grant>=<count>/<windowSeconds> (tool://payments/refund=20/3600); got ${JSON.stringify(value)}`);
    const [, grant = '', count = '', windowSeconds = ''] = match;
    (ceilings[grant] ??= []).push({ count: Number(count), windowSeconds: Number(windowSeconds) });
  }
  return ceilings;
}

function quotaText(tenant: string, quota: TenantQuota | null): string {
  if (quota === null) return `tenant '${tenant}' has no quota set: every ceiling is unlimited, periods are monthly\n`;
  const ceiling = (value: number | undefined) => (value === undefined ? 'unlimited' : String(value));
  const rows: [string, string][] = [
    ['max concurrent runs', ceiling(quota.maxConcurrentRuns)],
    ['max tokens per period', ceiling(quota.maxTokensPerPeriod)],
    ['max minor units per period', ceiling(quota.maxMinorUnitsPerPeriod)],
  ];
  for (const [grant, ceilings] of Object.entries(quota.rateCeilings ?? {})) {
    rows.push([`rate ${grant}`, ceilings.map((c) => `${c.count} per ${c.windowSeconds}s`).join(', ')]);
  }
  if (quota.alertThresholds !== undefined) rows.push(['alert thresholds', alertThresholdsText(quota.alertThresholds)]);
  for (const [agent, agentCeilings] of Object.entries(quota.agents ?? {})) {
    rows.push([
      `agent ${agent}`,
      `runs ${ceiling(agentCeilings.maxConcurrentRuns)}, tokens ${ceiling(agentCeilings.maxTokensPerPeriod)}, minor units ${ceiling(agentCeilings.maxMinorUnitsPerPeriod)}`,
    ]);
  }
  return `${[`tenant '${tenant}' (${quota.period} periods, UTC)`, ...labelledLines(rows, '  ')].join('\n')}\n`;
}

/** Registers `quotaplane quota get --tenant T` and `quotaplane quota set --tenant T …` (set is audited). */
export function registerQuota(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  const quota = program
    .command('quota')
    .summary("read, replace or change part of a tenant's quota")
    .description("Read (get), replace (set) or change part of (update) a tenant's quota; 'quota plane' does the same for the plane-wide ceiling.")
    .configureOutput(outputFor(io, 'quotaplane quota --help'));
  operatorCommand(quota, 'get', io, 'reads')
    .summary("print a tenant's quota")
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .action(async (flags: TargetFlags & { tenant: string }) => {
      const stored = await withTarget(flags, 'reads', (target) => target.getQuota(flags.tenant));
      writeAnswer(io, flags.json, { tenant: flags.tenant, quota: stored }, () => quotaText(flags.tenant, stored));
      setExitStatus(EXIT.OK);
    });
  withAgentOptions(operatorCommand(quota, 'set', io, 'writes'), false)
    .summary("replace a tenant's whole quota (audited as quota.set)")
    .description(
      "Replace the tenant's quota as a whole: a ceiling not given is unlimited, 0 allows nothing.\n" +
        'It applies to the next admission on every instance. The change is audited with the old and\n' +
        'the new quota. A tenant with no quota and no history is refused (exit 1, naming the nearest\n' +
        'known tenant) unless --new-tenant says it is new.',
    )
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .addOption(new Option('--period <period>', 'billing period (UTC)').choices(['monthly', 'daily']).default('monthly'))
    .addOption(new Option('--max-concurrent-runs <runs>', 'concurrent-run ceiling').argParser(amount))
    .addOption(new Option('--max-tokens-per-period <tokens>', 'token ceiling per period').argParser(amount))
    .addOption(new Option('--max-minor-units-per-period <minorUnits>', 'money ceiling per period, in minor units').argParser(amount))
    .addOption(new Option('--rate <grant=count/windowSeconds>', 'a rate ceiling of a grant (repeatable)').argParser(rateCeiling).default([]))
    .addOption(alertOption(false))
    .addOption(newTenantOption())
    .action(async (flags: QuotaSetFlags) => {
      const next = parseQuota(
        {
          period: flags.period,
          maxConcurrentRuns: flags.maxConcurrentRuns,
          maxTokensPerPeriod: flags.maxTokensPerPeriod,
          maxMinorUnitsPerPeriod: flags.maxMinorUnitsPerPeriod,
          rateCeilings: rateCeilings(flags.rate),
          agents: agentCeilingsOf(flags, false),
          alertThresholds: alertThresholdsOf(flags.alert, false),
        },
        'quota',
      );
      const stored = await withTarget(flags, 'writes', (target) => target.setQuota(flags.tenant, next, { newTenant: flags.newTenant }));
      writeAnswer(io, flags.json, { tenant: flags.tenant, quota: stored }, () => `set the quota of tenant '${flags.tenant}':\n${quotaText(flags.tenant, stored)}`);
      setExitStatus(EXIT.OK);
    });
  withAgentOptions(operatorCommand(quota, 'update', io, 'writes'), true)
    .summary("change part of a tenant's quota, keeping the rest (audited as quota.update)")
    .description(
      "Change only the ceilings given and keep every other one (a JSON Merge Patch of the quota, as PATCH /v1/tenants/{tenant}/quota). " +
        "'unlimited' removes a ceiling; --rate <grant>=none removes that grant's rate ceilings, and --rate <grant>=<count>/<windowSeconds> (repeatable) replaces them. " +
        'The change applies to the next admission on every instance and is audited with the old and the new quota.',
    )
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .addOption(new Option('--period <period>', 'billing period (UTC)').choices(['monthly', 'daily']))
    .addOption(new Option('--max-concurrent-runs <runs|unlimited>', 'concurrent-run ceiling').argParser(amountOrUnlimited))
    .addOption(new Option('--max-tokens-per-period <tokens|unlimited>', 'token ceiling per period').argParser(amountOrUnlimited))
    .addOption(
      new Option('--max-minor-units-per-period <minorUnits|unlimited>', 'money ceiling per period, in minor units').argParser(amountOrUnlimited),
    )
    .addOption(new Option('--rate <grant=count/windowSeconds|grant=none>', "a grant's rate ceilings to replace, or none to remove (repeatable)").argParser(rateCeiling).default([]))
    .addOption(alertOption(true))
    .addOption(newTenantOption())
    .action(async (flags: QuotaUpdateFlags) => {
      const patch = quotaPatch(flags);
      if (Object.keys(patch).length === 0) {
        throw new UsageError(
          'quota update: name at least one ceiling to change (--max-concurrent-runs, --max-tokens-per-period, --max-minor-units-per-period, --period, --rate, --alert or --agent-*)',
        );
      }
      const stored = await withTarget(flags, 'writes', (target) => target.updateQuota(flags.tenant, patch, { newTenant: flags.newTenant }));
      writeAnswer(io, flags.json, { tenant: flags.tenant, quota: stored }, () => `updated the quota of tenant '${flags.tenant}':\n${quotaText(flags.tenant, stored)}`);
      setExitStatus(EXIT.OK);
    });
  registerQuotaPlane(quota, io, setExitStatus);
}

interface QuotaUpdateFlags extends TargetFlags, AgentFlags {
  readonly tenant: string;
  readonly newTenant: boolean;
  readonly period?: 'monthly' | 'daily';
  readonly maxConcurrentRuns?: number | 'unlimited';
  readonly maxTokensPerPeriod?: number | 'unlimited';
  readonly maxMinorUnitsPerPeriod?: number | 'unlimited';
  readonly rate: string[];
  readonly alert: string[];
}

// The merge patch the flags of `quota update` describe: only what was given.
function quotaPatch(flags: QuotaUpdateFlags): QuotaPatch {
  const patch: { -readonly [K in keyof QuotaPatch]: QuotaPatch[K] } = {};
  if (flags.period !== undefined) patch.period = flags.period;
  const ceiling = (value: number | 'unlimited') => (value === 'unlimited' ? null : value);
  if (flags.maxConcurrentRuns !== undefined) patch.maxConcurrentRuns = ceiling(flags.maxConcurrentRuns);
  if (flags.maxTokensPerPeriod !== undefined) patch.maxTokensPerPeriod = ceiling(flags.maxTokensPerPeriod);
  if (flags.maxMinorUnitsPerPeriod !== undefined) patch.maxMinorUnitsPerPeriod = ceiling(flags.maxMinorUnitsPerPeriod);
  if (flags.rate.length > 0) {
    const grants: Record<string, RateCeiling[] | null> = {};
    const replaced = flags.rate.filter((value) => {
      const removal = /^(.+)=none$/.exec(value);
      if (removal === null) return true;
      grants[removal[1] ?? ''] = null;
      return false;
    });
    Object.assign(grants, rateCeilings(replaced) ?? {});
    patch.rateCeilings = grants;
  }
  const agents = agentCeilingsOf(flags, true);
  if (agents !== undefined) patch.agents = agents;
  const alerts = alertThresholdsOf(flags.alert, true);
  if (alerts !== undefined) patch.alertThresholds = alerts;
  return patch;
}

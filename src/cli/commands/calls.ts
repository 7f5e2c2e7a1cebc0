import { readFile } from 'node:fs/promises';

import { type Command, Option } from 'commander';

import { describeCallCeiling, parseCallCeilings, type CallCeiling, type CallCeilings } from '../../core/call-ceilings.js';
import { isQuotaError } from '../../core/errors.js';
import type { CallReservation } from '../../core/lifecycle/call-books.js';
import type { SubjectStanding } from '../../core/lifecycle/call-standings.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../plane/operator-types.js';
import { outputFor, type SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { renderTable, writeAnswer } from '../operator/format.js';
import { newTenantOption } from '../operator/new-tenant.js';
import type { OperatorTarget } from '../operator/operator-target.js';
import { operatorCommand, requireKnownTenant, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName, wholeNumberBetween } from '../options.js';
import { UsageError } from '../usage-error.js';

/*
 * `quotaplane calls …`: a tenant's model-call ceilings (docs/design/rules.md#m1, #m9, #m10) and its
 * calls in flight, on a store or through a server, as every operator command.
 */

interface ListFlags extends TargetFlags {
  readonly limit: number;
}

interface SetFlags extends TargetFlags {
  readonly file: string;
  readonly newTenant: boolean;
}

function listLimit(): Option {
  return new Option('--limit <n>', `list at most this many, up to ${MAX_LIST_LIMIT}`).argParser(wholeNumberBetween(1, MAX_LIST_LIMIT)).default(DEFAULT_LIST_LIMIT);
}

// A tenant the target has never seen is refused, naming the argument (a typo would read as an empty tenant).
async function knownTenant(target: OperatorTarget, tenant: string): Promise<void> {
  try {
    await requireKnownTenant(target, tenant);
  } catch (error) {
    if (isQuotaError(error, 'NOT_FOUND') && error.details.field === 'tenant') {
      error.message = error.message.replace('check --tenant', 'check the <tenant> argument');
    }
    throw error;
  }
}

/** Reads the ceilings of `calls set --file`: a JSON file (or `-`, standard input) holding the ceilings object. */
async function ceilingsFile(path: string, io: CliIo): Promise<CallCeilings> {
  let text: string;
  try {
    text = path === '-' ? await (io.readStdin ?? readProcessStdin)() : await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--file: cannot read ${JSON.stringify(path)} (${(error as Error).message}); give a JSON file of the ceilings, or - for standard input`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--file ${path}: is not JSON (${(error as Error).message}); write the ceilings as one JSON object, such as {"tenant":[{"unit":"tokens","limit":100000,"windowSeconds":60}]}`);
  }
  try {
    return parseCallCeilings(value, 'ceilings');
  } catch (error) {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--file ${path}: ${error.message}; fix it and run the command again`);
    throw error;
  }
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function ceilingLines(ceilings: readonly CallCeiling[]): string {
  return ceilings.length === 0 ? 'none' : ceilings.map(describeCallCeiling).join('; ');
}

/** The ceilings as a person reads them: one subject a line, each ceiling in words. */
export function ceilingsText(tenant: string, ceilings: CallCeilings | null): string {
  if (ceilings === null) return `tenant '${tenant}' has no model-call ceilings: every model call is admitted, and each is still counted\n`;
  const rows: string[][] = [];
  if (ceilings.tenant !== undefined) rows.push(['tenant', ceilingLines(ceilings.tenant)]);
  for (const [name, list] of Object.entries(ceilings.agents ?? {})) rows.push([`agent:${name}`, ceilingLines(list)]);
  for (const [name, list] of Object.entries(ceilings.models ?? {})) rows.push([`model:${name}`, ceilingLines(list)]);
  for (const [name, group] of Object.entries(ceilings.groups ?? {})) rows.push([`group:${name} (${group.models.join(', ')})`, ceilingLines(group.ceilings)]);
  if (ceilings.endUsers?.default !== undefined) rows.push(['each end user', ceilingLines(ceilings.endUsers.default)]);
  for (const [name, list] of Object.entries(ceilings.endUsers?.overrides ?? {})) rows.push([`user:${name}`, ceilingLines(list)]);
  const settings = [
    `default output cap ${ceilings.defaultMaxOutputTokens ?? 4096} tokens`,
    `lease ${ceilings.leaseMs === undefined ? '15 minutes (default)' : `${ceilings.leaseMs} ms`}`,
  ].join(', ');
  return `model-call ceilings of tenant '${tenant}' (${settings}):\n${rows.length === 0 ? 'no ceilings\n' : renderTable(['subject', 'ceilings'], rows)}`;
}

/** The standings as a table: one row per ceiling of each subject, in the ceiling's unit. */
export function standingsText(tenant: string, standings: readonly SubjectStanding[]): string {
  const rows = standings.flatMap((standing) =>
    standing.ceilings.length === 0
      ? [[standing.subject, 'no ceiling', '-', '-', '-']]
      : standing.ceilings.map((each) => [standing.subject, describeCallCeiling(each.ceiling), String(each.counted), String(each.held), String(each.remaining)]),
  );
  return `model-call standings of tenant '${tenant}' (counted: booked in the window or period; held: calls in flight):\n${renderTable(['subject', 'ceiling', 'counted', 'held', 'remaining'], rows)}`;
}

function openText(tenant: string, calls: readonly CallReservation[]): string {
  if (calls.length === 0) return `tenant '${tenant}' has no model call in flight\n`;
  const rows = calls.map((call) => [
    call.callId,
    call.model,
    call.agent ?? '-',
    call.endUser ?? '-',
    `${call.reserved.tokens} tokens, ${call.reserved.requests} request, ${call.reserved.minorUnits} minor units`,
    new Date(call.deadlineMs).toISOString(),
  ]);
  return renderTable(['call', 'model', 'agent', 'end user', 'reserved', 'deadline'], rows);
}

/**
 * Registers `quotaplane calls ceilings|set|clear|standings|open|release <tenant>`: read, replace
 * and remove a tenant's model-call ceilings (`set` and `clear` audited as `calls.set`), the
 * standing of every subject, the calls in flight, and an operator's release of a stuck call.
 */
export function registerCalls(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  const calls = program
    .command('calls')
    .summary("a tenant's model-call ceilings, their standings and its calls in flight")
    .description(
      "Read (ceilings), replace (set) or remove (clear) a tenant's model-call ceilings: tokens, requests or\n" +
        'minor units per sliding window or billing period, over the tenant, an agent, a model, a group of\n' +
        'models or an end user. standings shows what each ceiling counts now; open lists calls in flight;\n' +
        'release frees a stuck call.',
    )
    .configureOutput(outputFor(io, 'quotaplane calls --help'));

  operatorCommand(calls, 'ceilings', io, 'reads')
    .summary("print a tenant's model-call ceilings")
    .argument('<tenant>', 'the tenant', tenantName)
    .action(async (tenant: string, flags: TargetFlags) => {
      const ceilings = await withTarget(flags, 'reads', async (target) => {
        await knownTenant(target, tenant);
        return target.getCallCeilings(tenant);
      });
      writeAnswer(io, flags.json, { tenant, ceilings }, () => ceilingsText(tenant, ceilings));
      setExitStatus(EXIT.OK);
    });

  operatorCommand(calls, 'set', io, 'writes')
    .summary("replace a tenant's model-call ceilings from a JSON file (audited as calls.set)")
    .description(
      "Replace the tenant's model-call ceilings as a whole with the JSON object in --file (- reads\n" +
        'standard input), such as {"tenant":[{"unit":"tokens","limit":100000,"windowSeconds":60}],\n' +
        '"models":{"gpt-4o":[{"unit":"requests","limit":500,"period":"daily"}]}}. What the windows have\n' +
        'counted stays. The change is audited with the old and the new ceilings. A tenant with no quota\n' +
        'and no history is refused (exit 1, naming the nearest known tenant) unless --new-tenant says it is new.',
    )
    .argument('<tenant>', 'the tenant', tenantName)
    .requiredOption('--file <path>', 'the JSON file of the ceilings, or - for standard input')
    .addOption(newTenantOption())
    .action(async (tenant: string, flags: SetFlags) => {
      const next = await ceilingsFile(flags.file, io);
      const stored = await withTarget(flags, 'writes', (target) => target.setCallCeilings(tenant, next, { newTenant: flags.newTenant }));
      writeAnswer(io, flags.json, { tenant, ceilings: stored }, () => `set the ${ceilingsText(tenant, stored)}`);
      setExitStatus(EXIT.OK);
    });

  operatorCommand(calls, 'clear', io, 'writes')
    .summary("remove a tenant's model-call ceilings (audited as calls.set)")
    .description("Remove every model-call ceiling of the tenant. Calls are still counted, so ceilings set later see what was used.")
    .argument('<tenant>', 'the tenant', tenantName)
    .action(async (tenant: string, flags: TargetFlags) => {
      await withTarget(flags, 'writes', async (target) => {
        await knownTenant(target, tenant);
        return target.setCallCeilings(tenant, null);
      });
      writeAnswer(io, flags.json, { tenant, ceilings: null }, () => `removed the model-call ceilings of tenant '${tenant}'\n`);
      setExitStatus(EXIT.OK);
    });

  operatorCommand(calls, 'standings', io, 'reads')
    .summary('what each model-call ceiling of a tenant counts now, and the room left')
    .argument('<tenant>', 'the tenant', tenantName)
    .addOption(listLimit())
    .action(async (tenant: string, flags: ListFlags) => {
      const standings = await withTarget(flags, 'reads', async (target) => {
        await knownTenant(target, tenant);
        return target.callStandings({ tenant, limit: flags.limit });
      });
      writeAnswer(io, flags.json, { tenant, standings }, () => standingsText(tenant, standings));
      setExitStatus(EXIT.OK);
    });

  operatorCommand(calls, 'open', io, 'reads')
    .summary("a tenant's model calls in flight, earliest deadline first")
    .argument('<tenant>', 'the tenant', tenantName)
    .addOption(listLimit())
    .action(async (tenant: string, flags: ListFlags) => {
      const open = await withTarget(flags, 'reads', async (target) => {
        await knownTenant(target, tenant);
        return target.openCalls({ tenant, limit: flags.limit });
      });
      writeAnswer(io, flags.json, { tenant, calls: open }, () => openText(tenant, open));
      setExitStatus(EXIT.OK);
    });

  operatorCommand(calls, 'release', io, 'writes')
    .summary("free a stuck model call: its reservation is given back and nothing is booked")
    .description(
      'Give back the reservation of a model call that will never report (its process died), so its\n' +
        'worst case stops holding room before its lease ends. Nothing is booked. Exit status 1 when the\n' +
        'call does not exist or already ended otherwise (nothing is written).',
    )
    .argument('<tenant>', 'the tenant', tenantName)
    .argument('<callId>', "the call's id, as 'quotaplane calls open' lists it")
    .action(async (tenant: string, callId: string, flags: TargetFlags) => {
      const ended = await withTarget(flags, 'writes', async (target) => {
        await knownTenant(target, tenant);
        return target.releaseCall({ tenant, callId });
      });
      const r = ended.call.reserved;
      writeAnswer(io, flags.json, { tenant, ...ended }, () =>
        ended.retried
          ? `model call '${callId}' of tenant '${tenant}' was released already; nothing was written\n`
          : `released model call '${callId}' of tenant '${tenant}': gave back ${r.tokens} tokens, ${r.requests} request, ${r.minorUnits} minor units\n`,
      );
      setExitStatus(EXIT.OK);
    });
}

import { createHash } from 'node:crypto';

import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { isIdentifier } from '../core/identifiers.js';
import { parseRateCeilings } from '../core/quota.js';
import type { RateCeiling } from '../core/rate.js';
import type { ActiveRun } from './active-run.js';
import { ToolCallRefusedError } from './run-errors.js';

/**
 * Which grant each tool's calls are dispatches of, by tool name: a grant reference
 * (`'tool://payments/refund'`), or `{ grant, ceilings }` to declare rate ceilings of your own on
 * top of the tenant's configured ones for that grant (docs/design/rules.md#l24). A tool with no
 * entry is not counted; it still refuses to run once the run has stopped.
 */
export type ToolGrants = Readonly<Record<string, string | { readonly grant: string; readonly ceilings?: readonly RateCeiling[] }>>;

interface ToolGrant {
  readonly grant: string;
  readonly ceilings: readonly RateCeiling[];
}

/** Validates {@link ToolGrants}; throws `INVALID_ARGUMENT` naming `grants["<tool>"]`. */
export function parseToolGrants(value: unknown): ReadonlyMap<string, ToolGrant> {
  const grants = new Map<string, ToolGrant>();
  if (value === undefined) return grants;
  if (typeof value !== 'object' || value === null) throw invalidArgument('grants', `must be an object of tool name → grant, got ${describe(value)}`);
  for (const [tool, entry] of Object.entries(value as Record<string, unknown>)) {
    const field = `grants[${JSON.stringify(tool)}]`;
    const record = typeof entry === 'string' ? { grant: entry } : (entry as { grant?: unknown; ceilings?: unknown } | null);
    if (record === null || typeof record !== 'object' || !isIdentifier(record.grant)) {
      throw invalidArgument(field, `must be a grant like 'tool://server/name' or { grant, ceilings }, got ${describe(entry)}`);
    }
    const ceilings = record.ceilings === undefined ? [] : parseRateCeilings(record.ceilings, `${field}.ceilings`);
    grants.set(tool, { grant: record.grant, ceilings });
  }
  return grants;
}

/**
 * The gate every metered tool call passes before its tool runs: a dispatch of the tool's grant
 * keyed by the SDK's tool-call id (so a retried call is counted once), or, for a tool without a
 * grant, a check that the run has not stopped. A rate refusal throws `ToolCallRefusedError` (the
 * tool did not run); `Withheld` throws `RunWithheldError` and stops the run.
 */
export async function gateToolCall(run: ActiveRun, grants: ReadonlyMap<string, ToolGrant>, tool: string, callId: string): Promise<void> {
  const grant = grants.get(tool);
  if (grant === undefined) {
    run.throwIfStopped();
    return;
  }
  const answer = await run.dispatch(grant.grant, dispatchKey(callId), { ceilings: grant.ceilings });
  if (!answer.ok) {
    const retryAtMs = answer.refusal.code === 'RateLimited' ? answer.refusal.retryAtMs : undefined;
    throw new ToolCallRefusedError(tool, grant.grant, answer.message, retryAtMs);
  }
}

/** A tool-call id as a dispatch key: itself when it is a valid identifier, else a digest of it. */
function dispatchKey(callId: string): string {
  return isIdentifier(callId) && callId.length <= 100 ? callId : `call-sha256:${createHash('sha256').update(String(callId)).digest('hex')}`;
}

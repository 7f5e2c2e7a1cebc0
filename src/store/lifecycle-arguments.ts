import { describe } from '../core/amounts.js';
import { parseBudget } from '../core/budget.js';
import { invalidArgument } from '../core/errors.js';
import { DIGEST_PATTERN, type AgentIdentity } from '../core/halt-scope.js';
import { normaliseRunId, requireIdentifier } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import { parseRateCeilings, parseStoredQuota } from '../core/quota.js';
import { requireSpend } from '../core/spend.js';
import { requireAppliedInstant } from './applied-instant.js';
import { requireInstantMs } from '../core/instant.js';
import { requireBoolean, requireEpoch, requireLeaseMs, requireObject, requireWidth } from './store-arguments.js';
import type { AdmitRequest, AuditEntry, DispatchRequest, HeartbeatRequest, ResumeRequest, SettlePassRequest } from './types.js';

/*
 * The input rules of the run-lifecycle and audit arguments of the port (store.ts, second and third
 * groups), applied by `validated()` and, to its callers' input, by the plane. Each returns a
 * normalised copy or throws `INVALID_ARGUMENT` naming the field.
 */

const DIGEST = new RegExp(DIGEST_PATTERN);

/**
 * The governing agent identity `{ name, digest }`, or `undefined` when absent: `name` an
 * identifier, `digest` the SHA-256 of the reviewed manifest as 64 hex digits (`DIGEST_PATTERN`),
 * answered lowercase so it matches a `revision:` halt's key (docs/design/rules.md#d9).
 * `INVALID_ARGUMENT` names `<field>`, `<field>.name` or `<field>.digest`.
 */
export function requireAgent(field: string, value: unknown): AgentIdentity | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object { name, digest }, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const name = requireIdentifier(`${field}.name`, record.name);
  const digest = record.digest;
  if (typeof digest !== 'string' || !DIGEST.test(digest)) {
    throw invalidArgument(`${field}.digest`, `must be 64 hex digits (a SHA-256 of the manifest), got ${describe(digest)}`);
  }
  return { name, digest: digest.toLowerCase() };
}

/** Longest delegation chain a request may carry: 64 principals. The HTTP schema's `maxItems`. */
export const MAX_CHAIN_LENGTH = 64;

/**
 * A delegation chain, or `undefined` when absent: at most {@link MAX_CHAIN_LENGTH} principal
 * identifiers, root person first (may be empty). `INVALID_ARGUMENT` names `<field>` or `<field>[i]`.
 */
export function requireChain(field: string, value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    throw invalidArgument(field, `must be an array of principal ids, root person first, got ${describe(value)}`);
  }
  if (value.length > MAX_CHAIN_LENGTH) {
    throw invalidArgument(field, `must hold at most ${MAX_CHAIN_LENGTH} principals, got ${value.length}`);
  }
  return value.map((principal: unknown, index) => requireIdentifier(`${field}[${index}]`, principal));
}

/** An admission request (types.ts `AdmitRequest`). */
export function requireAdmitRequest(value: unknown): AdmitRequest {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    agent: requireAgent('agent', record.agent),
    chain: requireChain('chain', record.chain),
    budget: parseBudget(record.budget, 'budget'),
    width: requireWidth('width', record.width),
    atMs: requireInstantMs('atMs', record.atMs),
    leaseMs: requireLeaseMs('leaseMs', record.leaseMs),
    quota: record.quota === undefined || record.quota === null ? undefined : parseStoredQuota(record.quota, 'quota'),
    ...appliedOf(record),
  };
}

/** A resume request (types.ts `ResumeRequest`). */
export function requireResumeRequest(value: unknown): ResumeRequest {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    atMs: requireInstantMs('atMs', record.atMs),
    leaseMs: requireLeaseMs('leaseMs', record.leaseMs),
    ...appliedOf(record),
  };
}

/** A pass settlement request (types.ts `SettlePassRequest`). */
export function requireSettlePassRequest(value: unknown): SettlePassRequest {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    epoch: requireEpoch('epoch', record.epoch),
    spend: requireSpend('spend', record.spend),
    concludes: requireBoolean('concludes', record.concludes),
    atMs: requireInstantMs('atMs', record.atMs),
    by: record.by === undefined || record.by === null ? undefined : parseOperator(record.by, 'by'),
    ...appliedOf(record),
  };
}

/** A heartbeat request (types.ts `HeartbeatRequest`). */
export function requireHeartbeatRequest(value: unknown): HeartbeatRequest {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    epoch: requireEpoch('epoch', record.epoch),
    atMs: requireInstantMs('atMs', record.atMs),
    leaseMs: requireLeaseMs('leaseMs', record.leaseMs),
    ...appliedOf(record),
  };
}

/** A dispatch request (types.ts `DispatchRequest`). */
export function requireDispatchRequest(value: unknown): DispatchRequest {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    grant: requireIdentifier('grant', record.grant),
    dispatch: requireIdentifier('dispatch', record.dispatch),
    ceilings: parseRateCeilings(record.ceilings ?? [], 'ceilings'),
    exempt: requireBoolean('exempt', record.exempt),
    atMs: requireInstantMs('atMs', record.atMs),
    ...dispatchLease(record),
    ...appliedOf(record),
  };
}

// The `applied` member when given (a request without it is decided at its atMs).
function appliedOf(record: Record<string, unknown>): { applied?: ReturnType<typeof requireAppliedInstant> } {
  const applied = requireAppliedInstant(record.applied);
  return applied === undefined ? {} : { applied };
}

// A dispatch names its pass and lease together or not at all: a renewal needs both.
function dispatchLease(record: Record<string, unknown>): { epoch?: number; leaseMs?: number } {
  if (record.epoch === undefined || record.epoch === null) {
    if (record.leaseMs !== undefined && record.leaseMs !== null) {
      throw invalidArgument('leaseMs', 'renews the lease of the pass named by epoch; give epoch too, or drop leaseMs');
    }
    return {};
  }
  if (record.leaseMs === undefined || record.leaseMs === null) {
    throw invalidArgument('leaseMs', 'is required with epoch: the dispatch renews that pass\'s lease by leaseMs milliseconds');
  }
  return { epoch: requireEpoch('epoch', record.epoch), leaseMs: requireLeaseMs('leaseMs', record.leaseMs) };
}

/**
 * An audit row to append: an instant, an operator, an action (identifier), a non-empty subject,
 * and a JSON-serialisable `detail` object (types.ts `AuditEntry`). `field` prefixes the names.
 */
export function requireAuditEntry(field: string, value: unknown): AuditEntry {
  const record = requireObject(field, value);
  const subject = record.subject;
  if (typeof subject !== 'string' || subject.length === 0) {
    throw invalidArgument(`${field}.subject`, `must be a non-empty string, got ${describe(subject)}`);
  }
  const detail = requireObject(`${field}.detail`, record.detail ?? {});
  try {
    JSON.stringify(detail);
  } catch {
    throw invalidArgument(`${field}.detail`, 'must be JSON-serialisable data (no cycles, no bigint)');
  }
  return {
    atMs: requireInstantMs(`${field}.atMs`, record.atMs),
    by: parseOperator(record.by, `${field}.by`),
    action: requireIdentifier(`${field}.action`, record.action),
    subject,
    detail,
  };
}

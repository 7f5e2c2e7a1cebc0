import { Type } from '@sinclair/typebox';

import { ATTENTION_KINDS } from '../../plane/operator-types.js';
import { RUN_STATUSES } from '../../store/types.js';
import { AgentIdentity, described, Identifier, InstantMs, ListingLimit, Operator, Spend, strictObject } from './common.js';

/*
 * Reply and query schemas of the operator routes: the run registry, leases, the sweep,
 * attention, releases and the audit log. Shapes mirror the plane's (operator-types.ts,
 * store/types.ts) member for member, so the client hands back exactly what the plane answers.
 */

/** A run status (store/types.ts `RunStatus`). */
export const RunStatus = Type.Union(RUN_STATUSES.map((status) => Type.Literal(status)));

/** A comma-separated list of run statuses, as a query member (`status=stranded,withheld`). */
export const RunStatusList = Type.String({
  pattern: `^(${RUN_STATUSES.join('|')})(,(${RUN_STATUSES.join('|')}))*$`,
  description: `one or more run statuses separated by commas (no spaces), from ${RUN_STATUSES.join(', ')}`,
});

/** One run of the registry (store/types.ts `RunSummary`). */
export const RunSummary = strictObject({
  run: Type.String(),
  status: RunStatus,
  agent: Type.Union([AgentIdentity, Type.Null()]),
  chain: Type.Union([Type.Array(Type.String()), Type.Null()]),
  admittedAtMs: Type.Integer(),
  lastEpoch: Type.Integer(),
  statusSinceMs: Type.Integer(),
  holdsSlot: Type.Boolean(),
  leaseExpiresAtMs: Type.Integer(),
});

/** A page of the registry (plane `RunsPage`): `next` is the `after` of the following page, `null` on the last. */
export const RunsPage = strictObject({
  runs: Type.Array(RunSummary),
  truncated: Type.Boolean(),
  next: Type.Union([Type.String(), Type.Null()]),
});

/** `GET …/runs` query: statuses, cursor, page size. */
export const RunsQuery = strictObject({
  status: Type.Optional(RunStatusList),
  after: Type.Optional(described(Identifier, "a cursor: runs whose id sorts after this one (the previous page's next)")),
  limit: Type.Optional(ListingLimit),
});

/** A hold (store/types.ts `Held`). */
export const Held = strictObject({ run: Type.String(), period: Type.String(), remaining: Spend });

/** One row of the audit log (store/types.ts `AuditRecord`); `detail` is whatever the act recorded. */
export const AuditRecord = strictObject({
  seq: Type.Integer(),
  atMs: Type.Integer(),
  by: Operator,
  action: Type.String(),
  subject: Type.String(),
  // Any JSON object; typed as the store types it, so the reply types can be checked against the store's.
  detail: Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true })),
  hash: Type.String(),
});

/** A pass's receipt (store/types.ts `QuotaSettlement`). */
export const Receipt = strictObject({
  run: Type.String(),
  epoch: Type.Integer(),
  period: Type.Union([Type.String(), Type.Null()]),
  spend: Spend,
  releaseSlot: Type.Boolean(),
  concludes: Type.Boolean(),
});

/** What a settle did (plane `SettleResult`). */
export const SettleReply = strictObject({
  ok: Type.Literal(true),
  outcome: Type.Union([Type.Literal('settled'), Type.Literal('already-settled')]),
  receipt: Receipt,
  /** By how much the pass ran over its hold (zero when within). */
  overrun: Spend,
});

/** The members of a settle body besides the tenant: the pass, its own spend, whether it concluded the run, and the instant. */
export const SETTLE_FIELDS = {
  epoch: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the pass settled: its epoch from the admission or resume' }),
  spend: described(Spend, "what this pass itself spent (not the run's total so far)"),
  concludes: Type.Boolean({ description: 'true when this pass ends the run: the rest of its hold is given back and its slot freed' }),
  atMs: Type.Optional(InstantMs),
};

/** What an operator's release did (store/types.ts `ReleaseRunOutcome`). */
export const ReleaseReply = strictObject({
  outcome: Type.Union([Type.Literal('released'), Type.Literal('already-closed')]),
  run: Type.String(),
  previousStatus: Type.Union([RunStatus, Type.Null()]),
  slotReleased: Type.Boolean(),
  holdReleased: Type.Union([Held, Type.Null()]),
  audit: Type.Union([AuditRecord, Type.Null()]),
});

/** A bulk release of a tenant's stranded runs (plane `StrandedReleaseReport`): one result per run. */
export const StrandedReleaseReply = strictObject({
  tenant: Type.String(),
  released: Type.Integer({ description: 'runs this call released' }),
  failed: Type.Integer({ description: 'runs whose release failed (see each error); nothing is claimed for them' }),
  skipped: Type.Integer({ description: 'runs not released: no longer stranded when listed, or closed already' }),
  truncated: Type.Boolean({ description: 'more stranded runs stood beyond the most one call releases; call again' }),
  results: Type.Array(
    Type.Union([
      strictObject({ run: Type.String(), result: Type.Union([Type.Literal('released'), Type.Literal('already-closed')]), outcome: ReleaseReply }),
      strictObject({ run: Type.String(), result: Type.Literal('skipped'), reason: Type.String() }),
      strictObject({ run: Type.String(), result: Type.Literal('failed'), error: strictObject({ code: Type.String(), message: Type.String() }) }),
    ]),
  ),
});

/** A renewed lease (store/types.ts `LeaseRenewal`). */
export const LeaseRenewal = strictObject({
  ok: Type.Literal(true),
  run: Type.String(),
  epoch: Type.Integer(),
  leaseExpiresAtMs: Type.Integer(),
});

/** What a sweep did (plane `SweepResult`), its waiting queues included. */
export const SweepReply = strictObject({
  atMs: Type.Integer(),
  swept: Type.Array(strictObject({ tenant: Type.String(), run: Type.String(), releasedSlot: Type.Boolean(), stranded: Type.Boolean() })),
  // Listed here or the serializer drops it: the plane sets it only when a queue changed.
  waiters: Type.Optional(
    Type.Array(
      strictObject({
        tenant: Type.String(),
        expired: Type.Integer({ minimum: 0, description: 'waiters removed because their caller stopped looking' }),
        recovered: Type.Integer({ minimum: 0, description: 'grants nobody collected, given back' }),
        granted: Type.Integer({ minimum: 0, description: 'waiters admitted into the slots that freed' }),
      }),
      { description: 'the waiting queues the sweep changed, per tenant; absent when it changed none' },
    ),
  ),
});

const AttentionKind = Type.Union(ATTENTION_KINDS.map((kind) => Type.Literal(kind)));

/** What needs a person (plane `AttentionReport`), each condition with the commands that end it. */
export const AttentionReport = strictObject({
  atMs: Type.Integer(),
  holdStaleAfterMs: Type.Integer(),
  needsAttention: Type.Boolean(),
  conditions: Type.Array(
    strictObject({
      kind: AttentionKind,
      tenant: Type.String(),
      run: Type.String(),
      epoch: Type.Union([Type.Integer(), Type.Null()]),
      halt: Type.Union([Type.String(), Type.Null()]),
      sinceMs: Type.Integer(),
      ageMs: Type.Integer(),
      summary: Type.String(),
      remedy: strictObject({ text: Type.String(), cli: Type.Array(Type.String()), http: Type.Array(Type.String()) }),
    }),
  ),
  items: Type.Array(
    strictObject({
      tenant: Type.String(),
      run: Type.String({ description: "the run; for spend.overrun, a run that overran in the period, or ''" }),
      reasons: Type.Array(AttentionKind, { description: 'every condition of the run, in report order' }),
      epochs: Type.Array(Type.Integer(), { description: 'the passes the conditions name, ascending' }),
      halt: Type.Union([Type.String(), Type.Null()]),
      sinceMs: Type.Integer({ description: 'when the earliest condition began, Unix ms' }),
      ageMs: Type.Integer({ description: 'how long the longest-standing condition has stood, ms' }),
      summaries: Type.Array(Type.String()),
      remedy: strictObject({ text: Type.String(), cli: Type.Array(Type.String()), http: Type.Array(Type.String()) }),
    }),
    { description: 'the conditions gathered per run: one item per run with all its reasons' },
  ),
  truncated: Type.Boolean(),
  truncatedKinds: Type.Array(AttentionKind),
});

/** An audit verification (plane `AuditVerification`). */
export const AuditVerification = strictObject({
  ok: Type.Boolean(),
  tenants: Type.Array(
    strictObject({
      tenant: Type.String(),
      rows: Type.Integer(),
      ok: Type.Boolean(),
      firstMismatch: Type.Union([
        strictObject({
          seq: Type.Integer(),
          problem: Type.Union([Type.Literal('hash'), Type.Literal('sequence'), Type.Literal('unreadable')]),
          message: Type.String(),
        }),
        Type.Null(),
      ]),
    }),
  ),
});

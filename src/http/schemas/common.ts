import { Type, type ObjectOptions, type TProperties, type TSchema } from '@sinclair/typebox';

import { MAX_ALERT_THRESHOLDS, MAX_THRESHOLD_PERCENT, type AlertThreshold as CoreAlertThreshold } from '../../core/alert-thresholds.js';
import { MAX_AMOUNT } from '../../core/amounts.js';
import { CALL_UNITS, MAX_CALL_WINDOW_SECONDS } from '../../core/call-ceilings.js';
import { HALT_SCOPE_FORMS } from '../../core/halt-scope.js';
import { MAX_IDENTIFIER_LENGTH } from '../../core/identifiers.js';
import { TENANT_ACTS } from '../../core/known-tenant.js';
import { PROBLEM_CODES, PROBLEM_CONTENT_TYPE } from '../errors.js';
import { IDENTIFIER_KEYWORD } from '../validation.js';
import { MAX_LIST_LIMIT } from '../../plane/operator-types.js';
import { MAX_INSTANT_MS } from '../../core/instant.js';
import { DIGEST_PATTERN } from '../../core/halt-scope.js';
import { PERIOD_KEY_PATTERN, PERIODS } from '../../core/period.js';
import { MAX_LEASE_MS } from '../../store/store-arguments.js';

/*
 * TypeBox schemas shared by the routes: one schema gives request validation, reply
 * serialisation and the OpenAPI document. Every object refuses members it does not name
 * (`additionalProperties: false`). The schemas check shape and range; the plane still checks
 * meaning (printable identifiers, halt scope forms, …) and answers INVALID_ARGUMENT naming the
 * field, which the service turns into the same 400.
 */

/**
 * `schema` with a `description`, which the OpenAPI document shows beside the member: what it is,
 * its unit and its default. For shared schemas (an identifier, an amount) whose meaning depends
 * on where they are used.
 */
export function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}

/** An object schema that refuses unknown members. */
export function strictObject<T extends TProperties>(properties: T, options: ObjectOptions = {}) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

/** Most rate ceilings one dispatch may declare. */
export const MAX_DECLARED_CEILINGS = 16;
/** Most grants a tenant's quota may configure rate ceilings for. */
export const MAX_CONFIGURED_GRANTS = 256;

/**
 * A tenant, run, grant, agent or principal id: 1–200 characters of well-formed Unicode, with no
 * control or format character and no surrounding space (docs/design/decisions.md "Identifiers"). The custom keyword
 * answers with the library's own message.
 */
export const Identifier = Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH, [IDENTIFIER_KEYWORD]: true });

/** A non-negative safe integer (docs/design/decisions.md "Amounts are safe integers, and nothing saturates"). */
export const Amount = Type.Integer({ minimum: 0, maximum: MAX_AMOUNT });

/** An instant, integer Unix ms (docs/design/decisions.md "Time in milliseconds"). Accepted from operator keys only (see auth). */
export const InstantMs = Type.Integer({
  minimum: 0,
  maximum: MAX_INSTANT_MS,
  description: "the instant to decide at, Unix ms; only an operator key may send it (a runner key gets 400); default the server's clock",
});

/** A lease in ms: 1 to `MAX_LEASE_MS` (24 hours), the port's bound (store/store-arguments.ts). */
export const LeaseMs = Type.Integer({ minimum: 1, maximum: MAX_LEASE_MS, description: `Lease in milliseconds, at most ${MAX_LEASE_MS} (24 hours)` });

/** `{ tokens, minorUnits }`. */
export const Spend = strictObject({
  tokens: described(Amount, 'tokens'),
  minorUnits: described(Amount, "money, in the deployment's minor units (such as micro-USD)"),
});

/** A run's own ceilings (core/budget.ts). */
export const Budget = strictObject(
  {
    maxTokens: Type.Optional(described(Amount, 'most tokens the run may spend in all; held at admission')),
    maxMinorUnits: Type.Optional(described(Amount, 'most minor units the run may spend in all; held at admission')),
    maxCallTokens: Type.Optional(described(Amount, 'most tokens one call of the run may spend')),
    maxCallMinorUnits: Type.Optional(described(Amount, 'most minor units one call of the run may spend')),
  },
  { description: "the run's own ceilings; under a tenant spend ceiling a run must declare the unit's total and per-call bound, else Unbounded (422)" },
);

/** The governing agent identity: its name and the SHA-256 of its manifest (64 hex). */
export const AgentIdentity = strictObject({
  name: described(Identifier, 'the agent name, matched by agent halts and per-agent ceilings'),
  digest: Type.String({ pattern: DIGEST_PATTERN, description: 'the SHA-256 of the agent manifest, 64 hexadecimal digits' }),
});

/** `{ count, windowSeconds }`: at most `count` dispatches in any window of `windowSeconds`. */
export const RateCeiling = strictObject({
  count: described(Amount, 'most dispatches in any window'),
  windowSeconds: described(Amount, 'the window, in seconds; 1 to 2678400 (31 days) can be counted, any other is refused'),
});

/** What a model-call ceiling counts (core/call-ceilings.ts). */
export const CallUnit = Type.Union(
  CALL_UNITS.map((unit) => Type.Literal(unit)),
  { description: 'tokens (input + output), requests (one per call), or minorUnits (money)' },
);

/** One model-call ceiling: `limit` units per sliding window of `windowSeconds`, or per billing `period`. */
export const CallCeiling = strictObject(
  {
    unit: CallUnit,
    limit: described(Amount, 'most units counted (booked plus held by calls in flight); 0 admits nothing'),
    windowSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_CALL_WINDOW_SECONDS, description: `a sliding window of this many seconds, 1 to ${MAX_CALL_WINDOW_SECONDS}` }),
    ),
    period: Type.Optional(
      Type.Union(
        PERIODS.map((period) => Type.Literal(period)),
        { description: 'a billing period, UTC' },
      ),
    ),
  },
  { description: 'exactly one of windowSeconds (a sliding window) or period (monthly or daily)' },
);

/**
 * One spend-alert threshold (core AlertThreshold; docs/design/rules.md#e2): a percentage of the
 * ceiling, or an absolute amount in one unit.
 */
export const AlertThreshold = Type.Unsafe<CoreAlertThreshold>(
  strictObject(
    {
      percent: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_THRESHOLD_PERCENT, description: 'a percentage of the ceiling, in each unit it bounds' })),
      tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'settled tokens' })),
      minorUnits: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'settled minor units' })),
    },
    // One object with exactly one member, not a union: a wrong amount is then refused naming its own member.
    { minProperties: 1, maxProperties: 1, description: 'where an alert fires: exactly one of { percent } of the ceiling, { tokens } or { minorUnits } settled' },
  ),
);

/** A list of thresholds: absent inherits, `[]` alerts on nothing. */
export const AlertThresholds = Type.Array(AlertThreshold, {
  maxItems: MAX_ALERT_THRESHOLDS,
  description: 'spend-alert thresholds, compared with settled spend; absent: inherited (agent → tenant → plane → 80 % and 100 %), []: none',
});

/** The most agents one quota or the plane-wide ceiling may name ceilings for. */
export const MAX_AGENT_CEILINGS = 1000;

/** One agent's ceilings inside a tenant's quota (core AgentCeilings; docs/design/rules.md#k7). */
export const AgentCeilings = strictObject({
  maxConcurrentRuns: Type.Optional(described(Amount, "most of this agent's runs holding a slot at once")),
  maxTokensPerPeriod: Type.Optional(described(Amount, 'most tokens settled and held by this agent per billing period')),
  maxMinorUnitsPerPeriod: Type.Optional(described(Amount, 'most minor units settled and held by this agent per billing period')),
  alertThresholds: Type.Optional(AlertThresholds),
});

/*
 * How much one request may configure (ceilings per grant, grants, agents, weights) bounds request
 * bodies only. A reply carries the quota or ceiling as stored, and nothing keeps the stored one
 * within these bounds: the library and the CLI set quotas without them, and two PATCHes that each
 * fit add up past them. Inside a nullable reply member the serializer picks its branch by
 * validating, so a bound in a reply schema turned such a quota into a 500 on every read of it.
 */
const bounded = <T extends object>(requestBound: boolean, bounds: T): T | Record<string, never> => (requestBound ? bounds : {});

const PeriodKind = Type.Union([Type.Literal('monthly'), Type.Literal('daily')], { description: 'the billing period: a calendar month or a day, UTC' });

// A tenant's quota (core/quota.ts) with or without the request bounds, with its `period` member.
function tenantQuotaSchema<P extends TSchema>(requestBound: boolean, period: P) {
  return strictObject({
    maxConcurrentRuns: Type.Optional(described(Amount, 'most runs holding a slot at once; absent: unlimited, 0: none')),
    maxTokensPerPeriod: Type.Optional(described(Amount, 'most tokens settled and held per billing period; absent: unlimited')),
    maxMinorUnitsPerPeriod: Type.Optional(described(Amount, 'most minor units settled and held per billing period; absent: unlimited')),
    period,
    rateCeilings: Type.Optional(
      Type.Record(Identifier, Type.Array(RateCeiling, bounded(requestBound, { maxItems: MAX_DECLARED_CEILINGS })), {
        ...bounded(requestBound, { maxProperties: MAX_CONFIGURED_GRANTS }),
        description: 'grant → the rate ceilings configured for it',
      }),
    ),
    agents: Type.Optional(
      Type.Record(Identifier, AgentCeilings, { ...bounded(requestBound, { maxProperties: MAX_AGENT_CEILINGS }), description: 'agent name → its ceilings' }),
    ),
    alertThresholds: Type.Optional(AlertThresholds),
  });
}

/** A tenant's quota as stored and answered (core/quota.ts); absent ceilings are unlimited, 0 allows nothing. */
export const TenantQuota = tenantQuotaSchema(false, PeriodKind);

/** A quota as a request body: `period` may be left out (monthly), and the request bounds apply. */
export const TenantQuotaInput = tenantQuotaSchema(true, Type.Optional(PeriodKind));

// The plane-wide ceiling (core PlaneCeiling) with or without the request bounds.
function planeCeilingSchema(requestBound: boolean) {
  return strictObject({
    maxConcurrentRuns: Type.Optional(described(Amount, 'most runs holding a slot at once across every tenant; absent: unlimited')),
    agents: Type.Optional(
      Type.Record(Identifier, strictObject({ maxConcurrentRuns: Type.Optional(described(Amount, "most of this agent's runs holding a slot at once, across every tenant")) }), {
        ...bounded(requestBound, { maxProperties: MAX_AGENT_CEILINGS }),
        description: 'agent name → its ceiling across every tenant',
      }),
    ),
    weights: Type.Optional(
      Type.Record(Identifier, Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), {
        ...bounded(requestBound, { maxProperties: 100_000 }),
        description: 'tenant → its weight (at least 1) when waiting admissions share plane slots',
      }),
    ),
    alertThresholds: Type.Optional(AlertThresholds),
  });
}

/**
 * The plane-wide ceiling as stored and answered (core PlaneCeiling): across every
 * tenant, `maxConcurrentRuns`, per agent name `{ maxConcurrentRuns }`, and per tenant a weight ≥ 1
 * for waiting admissions.
 */
export const PlaneCeiling = planeCeilingSchema(false);

/** The plane-wide ceiling as a request body (`PUT /v1/plane/ceiling`), with the request bounds. */
export const PlaneCeilingInput = planeCeilingSchema(true);

/** Who threw or lifted a halt. */
export const Operator = strictObject({
  actor: Type.String(),
  basis: Type.Union([Type.Literal('asserted'), Type.Literal('authenticated')]),
});

/** A billing period key, `YYYY-MM` or `YYYY-MM-DD`. */
export const PeriodKey = Type.String({
  pattern: PERIOD_KEY_PATTERN,
  description: "a billing period, 'YYYY-MM' for a month or 'YYYY-MM-DD' for a day (UTC)",
});

/** A halt scope key: one of the four forms. */
export const ScopeKey = Type.String({
  minLength: 1,
  maxLength: 'revision:'.length + MAX_IDENTIFIER_LENGTH,
  description: `one of ${HALT_SCOPE_FORMS.join(', ')}`,
});

/** A listing page size, 1 … 1000 (default 100). */
export const ListingLimit = Type.Integer({ minimum: 1, maximum: MAX_LIST_LIMIT, description: `most rows to answer, 1 to ${MAX_LIST_LIMIT}; default 100` });

/** A pass as admit or resume opened it (store/types.ts `PassGrant`). */
export const PassGrant = strictObject({
  ok: Type.Literal(true),
  run: Type.String(),
  epoch: Type.Integer(),
  period: Type.String(),
  hold: Type.Union([Spend, Type.Null()]),
  leaseExpiresAtMs: Type.Integer(),
});

/** A tenant's waiting admissions (plane.ts `QueueFigures`): how many wait, and the oldest's wait in ms. */
export const QueueFigures = strictObject({
  depth: Type.Integer({ minimum: 0 }),
  oldestWaitMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
});

/** A tenant's figures for one period (plane.ts `Usage`). */
export const Usage = strictObject({
  tenant: Type.String(),
  period: Type.String(),
  spent: Spend,
  reserved: Spend,
  running: Type.Integer(),
  quota: Type.Union([TenantQuota, Type.Null()]),
  queue: QueueFigures,
  /** Per agent with ceilings in the quota: slots now, spend of the period, its ceilings. */
  agents: Type.Optional(
    Type.Array(strictObject({ agent: Type.String(), running: Type.Integer(), spent: Spend, reserved: Spend, ceilings: AgentCeilings })),
  ),
});

/** The query of a route that takes none: any member is refused, naming it. */
export const NoQuery = strictObject({});

/**
 * The query of an act that may create its tenant (a halt, a quota change, a key): `newTenant=true`
 * says the tenant is meant to be new. Without it, a tenant that does not exist answers 404 naming
 * it and the nearest known tenant, and nothing is written (docs/design/rules.md#l95).
 */
export const NewTenantQuery = strictObject({
  newTenant: Type.Optional(
    Type.Boolean({ description: 'true: the tenant is new, create it; without it a tenant with no quota and no history answers 404 (NOT_FOUND, with suggestion)' }),
  ),
});

/** The `{tenant}` path parameter. */
export const TenantParams = strictObject({ tenant: described(Identifier, 'the tenant, which the key must cover (404 otherwise)') });

/** The `{run}` path parameter. */
export const RunParams = strictObject({ run: described(Identifier, 'the run id, as admission answered it') });

/** The `tenant` member of a runner's request: whose work this is. */
export const ActingTenant = described(
  Identifier,
  "the tenant acted for: a runner key's own (may be repeated; another answers 404); an operator key names one it covers, and a key of every tenant must",
);

/**
 * The one error envelope (RFC 9457 `application/problem+json`): `type`, `title`, `status`,
 * `detail`, the stable `code`, the request id, and the refusal's own fields (or `field` for bad
 * input). Documented here; the service writes it itself (see errors.ts), so this schema never
 * serializes anything: it tells a client which members it may read.
 */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'urn:quotaplane:problem:<code>' }),
    title: Type.String(),
    status: Type.Integer({ description: 'the HTTP status, repeated' }),
    detail: Type.String({ description: 'one sentence saying what happened and what to do' }),
    code: Type.Union(PROBLEM_CODES.map((code) => Type.Literal(code)), { description: 'the stable code: a refusal, a fault, or an HTTP-only code' }),
    requestId: Type.String({ description: 'the x-request-id of the request, under which the server logged it' }),
    field: Type.Optional(
      Type.String({
        description:
          'INVALID_ARGUMENT: the member that is wrong (`budget.maxTokens`, `chain[2]`, `limit`); Unbounded: the budget field left open; NOT_FOUND: `tenant` for a tenant that does not exist, `callId` for a model call that does not; CONFLICT: `callId` for a model call that already ended',
      }),
    ),
    // The members of each refusal (core/refusal.ts), spread into the envelope.
    tenant: Type.Optional(Type.String({ description: 'the tenant refused; NOT_FOUND with field tenant: the tenant that does not exist' })),
    // The members of a NOT_FOUND for a tenant that does not exist (core/known-tenant.ts).
    act: Type.Optional(
      Type.Union(
        TENANT_ACTS.map((act) => Type.Literal(act)),
        { description: 'NOT_FOUND of a tenant that does not exist: the act refused; halt, quota and key create the tenant when repeated with ?newTenant=true' },
      ),
    ),
    suggestion: Type.Optional(Type.String({ description: 'NOT_FOUND of a tenant that does not exist: the known tenant nearest its name, when one is near' })),
    running: Type.Optional(Type.Integer({ description: 'TooManyRuns: slots held under the ceiling named by bound' })),
    limit: Type.Optional(Type.Integer({ description: 'TooManyRuns, SpentOut: the ceiling; PAYLOAD_TOO_LARGE: the largest body the server accepts, bytes' })),
    bound: Type.Optional(
      Type.Union([Type.Literal('agent'), Type.Literal('tenant'), Type.Literal('plane-agent'), Type.Literal('plane')], { description: 'TooManyRuns, SpentOut, Unbounded: whose ceiling bound' }),
    ),
    agent: Type.Optional(Type.String({ description: 'the agent name, when bound is agent or plane-agent' })),
    queuePosition: Type.Optional(Type.Integer({ description: 'TooManyRuns after a wait: the place it had in the queue, 1 = first' })),
    waitedMs: Type.Optional(Type.Integer({ description: 'TooManyRuns after a wait: how long it waited, ms' })),
    period: Type.Optional(Type.String({ description: 'SpentOut: the billing period' })),
    unit: Type.Optional(Type.Union([Type.Literal('tokens'), Type.Literal('minor units')], { description: 'SpentOut, Unbounded: the unit concerned' })),
    settled: Type.Optional(Type.Integer({ description: 'SpentOut: spend settled in the period' })),
    reserved: Type.Optional(Type.Integer({ description: 'SpentOut: spend held by running work' })),
    requested: Type.Optional(Type.Integer({ description: "SpentOut: the hold asked for; CallLimited, CallNeverFits: the call's worst case in the ceiling's unit" })),
    scope: Type.Optional(Type.String({ description: 'Halted: the key of the narrowest halt covering the run; Withheld: the key of the halt that reached the running run' })),
    reason: Type.Optional(Type.String({ description: "Halted, Withheld: the operator's reason" })),
    by: Type.Optional(Operator),
    haltedAtMs: Type.Optional(Type.Integer({ description: 'Halted: when the halt was thrown, Unix ms' })),
    subject: Type.Optional(
      Type.String({
        description:
          'Withheld by a subject halt: the principal it withdrew (absent when an agent, revision, tenant or plane halt reached the run); CallLimited, CallNeverFits: whose ceiling (tenant, agent:<name>, model:<id>, group:<name>, user:<id>)',
      }),
    ),
    grant: Type.Optional(Type.String({ description: 'RateLimited, UncountableRate: the tool grant' })),
    ceiling: Type.Optional(
      Type.Union([RateCeiling, CallCeiling], { description: 'RateLimited, UncountableRate: the rate ceiling; CallLimited, CallNeverFits: the model-call ceiling' }),
    ),
    reached: Type.Optional(Type.Integer({ description: 'RateLimited: dispatches already in the window' })),
    retryAtMs: Type.Optional(
      Type.Integer({
        description:
          'RateLimited: when one more dispatch fits; SpentOut: when its period ends, the only instant it can clear (absent when held spend may clear it sooner); CallLimited: when to ask again (see retryAfter); Unix ms',
      }),
    ),
    // The members of a model-call refusal (core/call-refusal.ts) not named above: subject, requested and ceiling are shared.
    counted: Type.Optional(Type.Integer({ description: "CallLimited: what the ceiling's window or period already counts, booked" })),
    held: Type.Optional(Type.Integer({ description: 'CallLimited: the worst cases of calls in flight under the ceiling' })),
    retryAfter: Type.Optional(
      Type.Union([Type.Literal('window'), Type.Literal('period'), Type.Literal('in-flight')], {
        description: 'CallLimited: what retryAtMs rests on: booked usage leaving the window, the period resetting, or a call in flight ending',
      }),
    ),
    // The members of a CONFLICT and of a STORE_UNAVAILABLE whose outcome is unknown (errors.ts errorMembers).
    outcome: Type.Optional(
      Type.Literal('unknown', {
        description:
          'STORE_UNAVAILABLE: the decision was sent but its answer never came, so it may stand; retry the same call with the same payload (under run) and the books answer it',
      }),
    ),
    run: Type.Optional(Type.String({ description: 'CONFLICT: the run concerned; STORE_UNAVAILABLE with outcome unknown: the run id to retry the admission under' })),
    fields: Type.Optional(Type.Array(Type.String(), { description: 'CONFLICT: the fields that differ from the admitted request or the settled receipt' })),
    runStatus: Type.Optional(Type.String({ description: "CONFLICT: the run's status" })),
    epoch: Type.Optional(Type.Integer({ description: 'CONFLICT: the pass concerned' })),
    latestEpoch: Type.Optional(Type.Integer({ description: "CONFLICT: the run's latest pass" })),
    pruned: Type.Optional(Type.Boolean({ description: 'CONFLICT: the run was pruned' })),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details, with the refusal fields as extension members' },
);

/*
 * The error replies point at the one Problem schema, which buildApp registers as a shared schema
 * (`app.addSchema`): /openapi.json then holds it once, under components.schemas.Problem, so a
 * generated client has one Problem type instead of an anonymous copy per operation and status
 * (seventy-odd copies made up most of the document).
 */
const ProblemRef = { $ref: 'Problem#' } as const;

const RequestIdHeader = { type: 'string', description: "the request's id: the caller's x-request-id, else one the server made" } as const;

/**
 * Reply schemas every authenticated route shares besides its success reply, for the OpenAPI
 * document: the envelope under its own media type (`application/problem+json`, which is what the
 * service sends, not `application/json`), and the headers an error carries.
 */
export const PROBLEM_REPLIES = {
  '4xx': {
    description:
      'A refusal or a fault of the request, as problem details: 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 404 NOT_FOUND, ' +
      '409 CONFLICT, 413 PAYLOAD_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE, 422 Unbounded, UncountableRate, CallNeverFits or a SpentOut that can never fit, ' +
      '423 Halted or Withheld, 429 TooManyRuns, SpentOut, RateLimited or CallLimited; a SpentOut only the period\'s end clears is 429, or 403 when the service is started with --spent-out-status 403',
    headers: {
      'retry-after': { type: 'integer', minimum: 1, description: 'seconds to wait before retrying; on a 429 where waiting can help' },
      'www-authenticate': { type: 'string', description: 'on a 401: Bearer realm="quotaplane"' },
      'x-request-id': RequestIdHeader,
    },
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemRef } },
  },
  '5xx': {
    description: 'The server could not answer, as problem details: 503 STORE_UNAVAILABLE (nothing was decided, retry; or, with outcome unknown, the decision may stand: retry the same call to learn it), 500 INTERNAL and other faults',
    headers: {
      'retry-after': { type: 'integer', minimum: 1, description: 'seconds to wait before retrying; on a 503' },
      'x-request-id': RequestIdHeader,
    },
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemRef } },
  },
} as const;

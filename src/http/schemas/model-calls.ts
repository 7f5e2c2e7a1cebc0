import { Type, type TSchema } from '@sinclair/typebox';

import { MAX_CALL_AMOUNT, MAX_CALL_LEASE_MS, MAX_CALL_SUBJECTS, MAX_CEILINGS_PER_SUBJECT } from '../../core/call-ceilings.js';
import { Amount, CallCeiling, described, Identifier, InstantMs, strictObject } from './common.js';

export { CallCeiling } from './common.js';

/*
 * The schemas of model-call ceilings and model calls (core/call-ceilings.ts,
 * core/lifecycle/call-books.ts, core/lifecycle/call-standings.ts). Bounds come from the core's
 * constants; the plane still parses the ceilings (parseCallCeilings), which names the bad member
 * and enforces what a schema says awkwardly (exactly one of windowSeconds and period).
 */

// The request bounds apply to request bodies only: a reply carries the ceilings as stored
// (schemas/common.ts explains why a reply schema carries no such bound).
const bounded = <T extends object>(requestBound: boolean, bounds: T): T | Record<string, never> => (requestBound ? bounds : {});

function callCeilingsSchema(requestBound: boolean) {
  const list = (description: string) => Type.Array(CallCeiling, { ...bounded(requestBound, { maxItems: MAX_CEILINGS_PER_SUBJECT }), description });
  const named = (value: TSchema, description: string) => Type.Record(Identifier, value, { ...bounded(requestBound, { maxProperties: MAX_CALL_SUBJECTS }), description });
  return strictObject({
    tenant: Type.Optional(list('ceilings over every model call of the tenant')),
    agents: Type.Optional(named(list("an agent's ceilings"), 'agent name → its ceilings')),
    models: Type.Optional(named(list("a model's ceilings"), 'model id → its ceilings')),
    groups: Type.Optional(
      named(
        strictObject({
          models: Type.Array(Identifier, { minItems: 1, description: 'the model ids the group covers' }),
          ceilings: Type.Optional(list('the ceilings every call of these models counts against together')),
        }),
        'group name → its models and shared ceilings',
      ),
    ),
    endUsers: Type.Optional(
      strictObject(
        {
          default: Type.Optional(list('the ceilings each end user has on their own')),
          overrides: Type.Optional(named(list("an end user's own ceilings"), 'end user → ceilings replacing the default for that user')),
        },
        { description: 'per end user: the default ceilings each has, and overrides for named users' },
      ),
    ),
    defaultMaxOutputTokens: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'output tokens a call that declares no cap reserves; default 4096' }),
    ),
    leaseMs: Type.Optional(
      Type.Integer({ minimum: 1000, maximum: MAX_CALL_LEASE_MS, description: `how long a call may stay in flight before its worst case is booked as an estimate, ms; default 900000` }),
    ),
  });
}

/** A tenant's model-call ceilings as stored and answered. */
export const CallCeilings = callCeilingsSchema(false);

/** Model-call ceilings as a request body, with the request bounds. */
export const CallCeilingsInput = callCeilingsSchema(true);

/** An amount in each unit a model call is counted in. */
export const CallAmounts = strictObject({ tokens: Amount, requests: Amount, minorUnits: Amount });

/** One model call's reservation, as stored (core/lifecycle/call-books.ts `CallReservation`). */
export const CallReservation = strictObject({
  callId: Type.String(),
  model: Type.String(),
  agent: Type.Union([Type.String(), Type.Null()]),
  endUser: Type.Union([Type.String(), Type.Null()]),
  subjects: Type.Array(Type.String(), { description: 'every meter the call counts on: tenant, agent:<name>, model:<id>, group:<name>, user:<id>' }),
  reserved: described(CallAmounts, 'its worst case, held on each subject while it is open'),
  maxOutputTokens: Type.Integer({ description: 'the output cap to ask the model for' }),
  atMs: Type.Integer(),
  deadlineMs: Type.Integer({ description: 'when an open call is booked at its worst case, as an estimate' }),
  status: Type.Union([Type.Literal('open'), Type.Literal('booked'), Type.Literal('released')]),
  booked: Type.Union([CallAmounts, Type.Null()], { description: 'what was booked when it ended; null while open or once released' }),
  estimated: Type.Boolean({ description: 'the booking is the worst case because no usage was reported' }),
  closedAtMs: Type.Union([Type.Integer(), Type.Null()]),
});

/** A call reserved or ended: `retried` when the same request had already been answered. */
export const CallAnswer = strictObject({ call: CallReservation, retried: Type.Boolean() });

/** One subject's standing (core/lifecycle/call-standings.ts `SubjectStanding`). */
export const SubjectStanding = strictObject({
  subject: Type.String(),
  booked: described(CallAmounts, 'everything ever booked to the subject'),
  held: described(CallAmounts, 'the worst cases of its calls in flight'),
  ceilings: Type.Array(
    strictObject({
      ceiling: CallCeiling,
      counted: Type.Integer({ description: 'booked usage its window or period counts' }),
      held: Type.Integer({ description: 'what calls in flight hold against it' }),
      remaining: Type.Integer({ description: 'limit − counted − held, floored at 0' }),
    }),
  ),
});

/** One amount of a model call: 0 … 10^12 (`MAX_CALL_AMOUNT`). */
const CallAmount = Type.Integer({ minimum: 0, maximum: MAX_CALL_AMOUNT });

/** `POST /v1/tenants/{tenant}/calls`. */
export const ReserveCallBody = strictObject({
  model: described(Identifier, 'the model id the call is for'),
  agent: Type.Optional(described(Identifier, 'the agent making the call')),
  endUser: Type.Optional(described(Identifier, 'the end user the call serves')),
  callId: Type.Optional(described(Identifier, 'your id for the call, so a retry answers the same reservation; default call_<ULID>')),
  inputTokens: described(CallAmount, "the prompt's tokens, counted or estimated"),
  maxOutputTokens: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_CALL_AMOUNT, description: "the output cap the call asks for; default the tenant's defaultMaxOutputTokens" }),
  ),
  maxMinorUnits: Type.Optional(
    described(CallAmount, 'the worst-case cost; this or minorUnitsPerMillionTokens (not both) is required when a minorUnits ceiling covers the call'),
  ),
  minorUnitsPerMillionTokens: Type.Optional(
    described(Amount, "the model's dearest rate: the worst-case tokens are priced at it, rounded up, once the output cap is chosen; instead of maxMinorUnits"),
  ),
  leaseMs: Type.Optional(
    Type.Integer({ minimum: 1000, maximum: MAX_CALL_LEASE_MS, description: "how long the call may stay in flight, ms; default the tenant's leaseMs, else 900000" }),
  ),
  atMs: Type.Optional(InstantMs),
});

/** `POST …/calls/{callId}/adjust`. */
export const AdjustCallBody = strictObject({
  usage: Type.Optional(
    strictObject(
      {
        inputTokens: described(CallAmount, 'input tokens the model reported'),
        outputTokens: described(CallAmount, 'output tokens the model reported'),
        minorUnits: Type.Optional(described(CallAmount, 'its cost, when known')),
      },
      { description: 'what the call used; absent, its worst case is booked as an estimate' },
    ),
  ),
  atMs: Type.Optional(InstantMs),
});

/** `POST …/calls/{callId}/release`. */
export const ReleaseCallBody = strictObject({ atMs: Type.Optional(InstantMs) });

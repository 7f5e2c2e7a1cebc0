import { Type, type Static } from '@sinclair/typebox';

import { actingTenant, callerInstant } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { sendRefused } from '../route-context.js';
import {
  AgentIdentity,
  Amount,
  Budget,
  Identifier,
  InstantMs,
  MAX_CHAIN_LENGTH,
  PassGrant,
  PositiveMs,
  PROBLEM_REPLIES,
  RunParams,
  Spend,
  strictObject,
} from '../schemas/common.js';

const AdmitBody = strictObject({
  tenant: Type.Optional(Identifier),
  run: Type.Optional(Identifier),
  agent: Type.Optional(AgentIdentity),
  chain: Type.Optional(Type.Array(Identifier, { maxItems: MAX_CHAIN_LENGTH })),
  budget: Type.Optional(Budget),
  width: Type.Optional(Amount),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(PositiveMs),
});

const SettleBody = strictObject({
  tenant: Type.Optional(Identifier),
  epoch: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  spend: Spend,
  concludes: Type.Boolean(),
  atMs: Type.Optional(InstantMs),
});

const SettleReply = strictObject({
  ok: Type.Literal(true),
  outcome: Type.Union([Type.Literal('settled'), Type.Literal('already-settled')]),
  receipt: strictObject({
    run: Type.String(),
    epoch: Type.Integer(),
    period: Type.Union([Type.String(), Type.Null()]),
    spend: Spend,
    releaseSlot: Type.Boolean(),
    concludes: Type.Boolean(),
  }),
});

const ResumeBody = strictObject({
  tenant: Type.Optional(Identifier),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(PositiveMs),
});

const RUNNER = { access: 'runner' } as const;
const TAGS = ['runner'];
const SECURITY = [{ bearer: [] }];

/**
 * The run lifecycle for runners (issue #4 item 2): `POST /v1/runs` (admit), `POST
 * /v1/runs/{run}/settle`, `POST /v1/runs/{run}/resume`. Each is one plane call; refusals answer
 * their problem reply (429 with Retry-After, 423, 422), faults their status (400, 404, 409, 503).
 */
export const runRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof AdmitBody> }>(
    '/v1/runs',
    {
      config: RUNNER,
      schema: {
        summary: 'Admit a run: its first pass, or a refusal (Halted 423, Unbounded 422, TooManyRuns/SpentOut 429)',
        tags: TAGS,
        security: SECURITY,
        body: AdmitBody,
        response: { 200: PassGrant, ...PROBLEM_REPLIES },
      },
    },
    async (request, reply) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      const result = await context.plane.admit({ ...request.body, tenant, atMs });
      return result.ok ? result : sendRefused(reply, request, result, context, atMs);
    },
  );

  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof SettleBody> }>(
    '/v1/runs/:run/settle',
    {
      config: RUNNER,
      schema: {
        summary: 'Settle a pass exactly once (an identical retry answers already-settled; a different payload 409)',
        tags: TAGS,
        security: SECURITY,
        params: RunParams,
        body: SettleBody,
        response: { 200: SettleReply, ...PROBLEM_REPLIES },
      },
    },
    async (request) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      return context.plane.settle({ ...request.body, tenant, run: request.params.run, atMs });
    },
  );

  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof ResumeBody> }>(
    '/v1/runs/:run/resume',
    {
      config: RUNNER,
      schema: {
        summary: 'Open a new pass of an admitted run (never gated; carries its hold to the current period)',
        tags: TAGS,
        security: SECURITY,
        params: RunParams,
        body: ResumeBody,
        response: { 200: PassGrant, ...PROBLEM_REPLIES },
      },
    },
    async (request, reply) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      // A resume refuses nothing today; a refusal value (Withheld, issue #5) still answers as one.
      const result = await context.plane.resume({ ...request.body, tenant, run: request.params.run, atMs });
      return result.ok ? result : sendRefused(reply, request, result, context, atMs);
    },
  );
};

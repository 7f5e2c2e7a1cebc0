import { Type, type Static } from '@sinclair/typebox';

import { actingTenant, callerInstant } from '../auth.js';
import { runVerbHandler, sendRefused, type RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import {
  AgentIdentity,
  Amount,
  Budget,
  Identifier,
  InstantMs,
  MAX_CHAIN_LENGTH,
  PassGrant,
  LeaseMs,
  RunParams,
  strictObject,
} from '../schemas/common.js';
import { LeaseRenewal, SETTLE_FIELDS, SettleReply } from '../schemas/operator.js';

const AdmitBody = strictObject({
  tenant: Type.Optional(Identifier),
  run: Type.Optional(Identifier),
  agent: Type.Optional(AgentIdentity),
  chain: Type.Optional(Type.Array(Identifier, { maxItems: MAX_CHAIN_LENGTH })),
  budget: Type.Optional(Budget),
  width: Type.Optional(Amount),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(LeaseMs),
});

const SettleBody = strictObject({ tenant: Type.Optional(Identifier), ...SETTLE_FIELDS });

const ResumeBody = strictObject({
  tenant: Type.Optional(Identifier),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(LeaseMs),
});

const HeartbeatBody = strictObject({
  tenant: Type.Optional(Identifier),
  epoch: SETTLE_FIELDS.epoch,
  leaseMs: Type.Optional(LeaseMs),
  atMs: Type.Optional(InstantMs),
});

/**
 * The run lifecycle for runners (issue #4 item 2, issue #5 item 1): `POST /v1/runs` (admit),
 * `POST /v1/runs/{run}/settle`, `POST /v1/runs/{run}/resume`, `POST /v1/runs/{run}/heartbeat`.
 * Each is one plane call; refusals answer their problem reply (429 with Retry-After, 423, 422),
 * faults their status (400, 404, 409 for a stale epoch or a conflicting settle, 503).
 */
export const runRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof AdmitBody> }>(
    '/v1/runs',
    protectedRoute('runner', {
      summary: 'Admit a run: its first pass, or a refusal (Halted 423, Unbounded 422, TooManyRuns/SpentOut 429; SpentOut 422 when the hold alone exceeds the ceiling)',
      body: AdmitBody,
      reply: PassGrant,
    }),
    async (request, reply) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      const result = await context.plane.admit({ ...request.body, tenant, atMs });
      return result.ok ? result : sendRefused(reply, request, result, context, atMs);
    },
  );

  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof SettleBody> }>(
    '/v1/runs/:run/settle',
    protectedRoute('runner', {
      summary: 'Settle a pass exactly once (an identical retry answers already-settled; a different payload 409)',
      params: RunParams,
      body: SettleBody,
      reply: SettleReply,
    }),
    runVerbHandler(context, (input) => context.plane.settle(input)),
  );

  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof ResumeBody> }>(
    '/v1/runs/:run/resume',
    protectedRoute('runner', {
      summary: 'Open a new pass of an admitted run (never gated; carries its hold to the current period)',
      params: RunParams,
      body: ResumeBody,
      reply: PassGrant,
    }),
    runVerbHandler(context, (input) => context.plane.resume(input)),
  );

  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof HeartbeatBody> }>(
    '/v1/runs/:run/heartbeat',
    protectedRoute('runner', {
      summary: "Renew a pass's lease (Withheld 423: pause the run; a stale epoch or a stranded run 409)",
      params: RunParams,
      body: HeartbeatBody,
      reply: LeaseRenewal,
    }),
    runVerbHandler(context, (input) => context.plane.heartbeat(input)),
  );
};

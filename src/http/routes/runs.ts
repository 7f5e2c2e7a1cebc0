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

/** The longest `wait` an HTTP admission may ask for, ms: a long poll stays within common proxy timeouts. */
export const MAX_HTTP_WAIT_MS = 60_000;

const AdmitBody = strictObject({
  tenant: Type.Optional(Identifier),
  run: Type.Optional(Identifier),
  agent: Type.Optional(AgentIdentity),
  chain: Type.Optional(Type.Array(Identifier, { maxItems: MAX_CHAIN_LENGTH })),
  budget: Type.Optional(Budget),
  width: Type.Optional(Amount),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(LeaseMs),
  wait: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_HTTP_WAIT_MS,
      description: `How long to wait for a slot, ms (0 to ${MAX_HTTP_WAIT_MS}): only a TooManyRuns refusal waits, answered as a long poll (issue 12)`,
    }),
  ),
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
 * Each is one plane call; an admission with `wait` is a long poll (issue 12); refusals answer their problem reply (429 with Retry-After, 423, 422),
 * faults their status (400, 404, 409 for a stale epoch or a conflicting settle, 503).
 */
export const runRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof AdmitBody> }>(
    '/v1/runs',
    protectedRoute('runner', {
      summary:
        'Admit a run: its first pass, or a refusal (Halted 423, Unbounded 422, TooManyRuns/SpentOut 429; SpentOut 422 when the hold alone exceeds the ceiling). ' +
        'With `wait` (ms) a TooManyRuns refusal waits in the tenant queue, first come first served, as a long poll',
      body: AdmitBody,
      reply: PassGrant,
    }),
    async (request, reply) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      const { wait, ...body } = request.body;
      if (wait === undefined || wait === 0) {
        const result = await context.plane.admit({ ...body, tenant, atMs });
        return result.ok ? result : sendRefused(reply, request, result, context, atMs);
      }
      // A long poll: a client that goes away while it waits cancels its place (or gives back a
      // grant it never collected), so nothing is left behind.
      const gone = new AbortController();
      const onClose = (): void => {
        if (!reply.raw.writableFinished) gone.abort();
      };
      reply.raw.on('close', onClose);
      try {
        const result = await context.plane.admit({ ...body, tenant, atMs, waitMs: wait, signal: gone.signal });
        return result.ok ? result : sendRefused(reply, request, result, context, undefined);
      } catch (error) {
        // Nobody is left to answer: 499 (client closed request) is what the access log shows.
        if (gone.signal.aborted) return reply.code(499).send();
        throw error;
      } finally {
        reply.raw.removeListener('close', onClose);
      }
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

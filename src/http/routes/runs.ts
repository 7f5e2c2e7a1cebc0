import { Type, type Static } from '@sinclair/typebox';

import { waitWithInstantReason } from '../../plane/admit.js';
import { MAX_CHAIN_LENGTH } from '../../store/lifecycle-arguments.js';
import { actingTenant, callerInstant } from '../auth.js';
import { badInput, HttpProblem } from '../errors.js';
import { runVerbHandler, sendRefused, type RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import {
  ActingTenant,
  AgentIdentity,
  described,
  Amount,
  Budget,
  Identifier,
  InstantMs,
  PassGrant,
  LeaseMs,
  RunParams,
  strictObject,
} from '../schemas/common.js';
import { LeaseRenewal, SETTLE_FIELDS, SettleReply } from '../schemas/operator.js';

/** The 503 a long poll gets when the server shuts down while it waits: its waiter was cancelled, nothing is held. */
function shuttingDown(): HttpProblem {
  return new HttpProblem(
    'STORE_UNAVAILABLE',
    'the server is shutting down: this waiting admission was cancelled and holds nothing; retry the admission (with its wait) after Retry-After, here or on another instance',
  );
}

/** The longest `wait` an HTTP admission may ask for, ms: a long poll stays within common proxy timeouts. */
export const MAX_HTTP_WAIT_MS = 60_000;

const AdmitBody = strictObject({
  tenant: Type.Optional(ActingTenant),
  run: Type.Optional(described(Identifier, 'your run id, so a retry after a lost answer is the same admission; default a new run_<ULID>')),
  agent: Type.Optional(described(AgentIdentity, 'the governing agent identity, matched by agent and revision halts and per-agent ceilings')),
  chain: Type.Optional(
    Type.Array(Identifier, { maxItems: MAX_CHAIN_LENGTH, description: 'the delegation chain, root person first, matched by subject halts' }),
  ),
  budget: Type.Optional(Budget),
  width: Type.Optional(described(Amount, 'steps the run may have in flight at once; default 1')),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(LeaseMs),
  wait: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_HTTP_WAIT_MS,
      description: `How long to wait for a slot, ms (0 to ${MAX_HTTP_WAIT_MS}): only a TooManyRuns refusal waits, answered as a long poll`,
    }),
  ),
  waitMs: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_HTTP_WAIT_MS,
      description: '`wait` under the library\'s name (`admit({ waitMs })`); give one of the two',
    }),
  ),
});

const SettleBody = strictObject({ tenant: Type.Optional(ActingTenant), ...SETTLE_FIELDS });

const ResumeBody = strictObject({
  tenant: Type.Optional(ActingTenant),
  atMs: Type.Optional(InstantMs),
  leaseMs: Type.Optional(LeaseMs),
});

const HeartbeatBody = strictObject({
  tenant: Type.Optional(ActingTenant),
  epoch: described(SETTLE_FIELDS.epoch, 'the pass whose lease to renew: its epoch from the admission or resume'),
  leaseMs: Type.Optional(LeaseMs),
  atMs: Type.Optional(InstantMs),
});

/**
 * The run lifecycle for runners: `POST /v1/runs` (admit),
 * `POST /v1/runs/{run}/settle`, `POST /v1/runs/{run}/resume`, `POST /v1/runs/{run}/heartbeat`.
 * Each is one plane call; an admission with `wait` is a long poll (docs/design/rules.md#w1); refusals answer their problem reply (429 with Retry-After, 423, 422),
 * faults their status (400, 404, 409 for a stale epoch or a conflicting settle, 503).
 */
export const runRoutes: RouteModule = (app, context) => {
  // Long polls still open when the app starts closing (serve's SIGTERM) are ended at once with an
  // answer, their waiters cancelled, so a shutdown neither waits out their waits nor cuts them.
  const openPolls = new Set<() => void>();
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const endPoll of openPolls) endPoll();
  });

  app.post<{ Body: Static<typeof AdmitBody> }>(
    '/v1/runs',
    protectedRoute('runner', {
      operationId: 'admit',
      summary:
        'Admit a run: its first pass, or a refusal (Halted 423, Unbounded 422, TooManyRuns/SpentOut 429; SpentOut 422 when the hold alone exceeds the ceiling). ' +
        'With `wait` (ms) a TooManyRuns refusal waits in the tenant queue, first come first served, as a long poll',
      body: AdmitBody,
      reply: PassGrant,
    }),
    async (request, reply) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      const { wait: waitGiven, waitMs, ...body } = request.body;
      if (waitGiven !== undefined && waitMs !== undefined && waitGiven !== waitMs) {
        throw badInput('waitMs', `give the wait once: wait is ${waitGiven} ms and waitMs ${waitMs} ms (waitMs is the library's name for wait)`);
      }
      const wait = waitGiven ?? waitMs;
      if (wait === undefined || wait === 0) {
        const result = await context.plane.admit({ ...body, tenant, atMs });
        return result.ok ? result : sendRefused(reply, request, result, context, atMs);
      }
      // A wait runs in real time from now; an instant given with it is refused (see waitWithInstantReason).
      if (atMs !== undefined) throw badInput('wait', waitWithInstantReason('wait'));
      if (closing) throw shuttingDown();
      // A long poll: a client that goes away while it waits cancels its place (or gives back a
      // grant it never collected), so nothing is left behind; so does the server shutting down.
      // One controller for both (AbortSignal.any is not in every Node 20); `why` says which came first.
      const stop = new AbortController();
      let why: 'gone' | 'shutdown' | null = null;
      const abort = (reason: 'gone' | 'shutdown'): void => {
        why ??= reason;
        stop.abort();
      };
      const onClose = (): void => {
        if (!reply.raw.writableFinished) abort('gone');
      };
      const onShutdown = (): void => abort('shutdown');
      reply.raw.on('close', onClose);
      openPolls.add(onShutdown);
      try {
        const result = await context.plane.admit({ ...body, tenant, waitMs: wait, signal: stop.signal });
        return result.ok ? result : sendRefused(reply, request, result, context, undefined);
      } catch (error) {
        // Nobody is left to answer: 499 (client closed request) is what the access log shows.
        if (why === 'gone') return reply.code(499).send();
        if (why === 'shutdown') throw shuttingDown();
        throw error;
      } finally {
        openPolls.delete(onShutdown);
        reply.raw.removeListener('close', onClose);
      }
    },
  );

  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof SettleBody> }>(
    '/v1/runs/:run/settle',
    protectedRoute('runner', {
      operationId: 'settle',
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
      operationId: 'resume',
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
      operationId: 'heartbeat',
      summary: "Renew a pass's lease (Withheld 423: pause the run; a stale epoch or a stranded run 409)",
      params: RunParams,
      body: HeartbeatBody,
      reply: LeaseRenewal,
    }),
    runVerbHandler(context, (input) => context.plane.heartbeat(input)),
  );
};

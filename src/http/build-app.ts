import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { createRequire } from 'node:module';

import type { Clock } from '../core/clock.js';
import { QuotaError } from '../core/errors.js';
import { MAX_PATH_PARAMETER_LENGTH } from '../core/identifiers.js';
import type { Plane } from '../plane/plane.js';
import { systemClock } from '../plane/system-clock.js';
import type { ApiKeyStore } from '../store/api-keys.js';
import type { QuotaStore } from '../store/store.js';
import { keyCoversTenant } from '../store/api-keys.js';
import { authenticate, authorize } from './auth.js';
import { createKeyUseRecorder } from './key-use-recorder.js';
import { CSRF_HEADER } from './key-session.js';
import { registerDashboard, type DashboardOptions } from './dashboard.js';
import { DEFAULT_RETRY_AFTER, errorProblem, HttpProblem, PROBLEM_CONTENT_TYPE, type ProblemReply, type RetryAfterDefaults, type SpentOutStatus } from './errors.js';
import { createServiceMetrics } from './metrics.js';
import { REQUEST_ID_HEADER, requestIdGenerator } from './request-id.js';
import { problemCodeOf, requestLogLine } from './request-log.js';
import type { RouteContext, RouteModule } from './route-context.js';
import { MERGE_PATCH_CONTENT_TYPE } from './route-options.js';
import { ROUTES } from './routes/index.js';
import { Problem } from './schemas/common.js';
import { cachedSerializerFactory } from './serializers.js';
import { strictValidatorCompiler } from './validation.js';
import { DEFAULT_BODY_DRAIN, DEFAULT_BODY_LIMIT_BYTES } from './http-defaults.js';
import { drainBody, type BodyDrainBounds } from './body-drain.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

export { DEFAULT_BODY_DRAIN, DEFAULT_BODY_LIMIT_BYTES };

/**
 * Options of {@link buildApp}.
 * - `plane`: the plane every route calls (from `createPlane`), its listings included; `store` the
 *   store it runs on (only the readiness probe reads it); `keys` the API keys requests are checked against.
 * - `logger`: a pino logger for request logs and 500s; default none (silent).
 * - `clock`: the plane's clock, used to date refusals for `Retry-After`; default the wall clock.
 * - `bodyLimitBytes`: largest body accepted, bytes; default {@link DEFAULT_BODY_LIMIT_BYTES}. A
 *   larger one answers 413 PAYLOAD_TOO_LARGE naming the limit (`limit`, bytes).
 * - `bodyDrain`: a request answered before its body has all arrived (a 413 decided from the
 *   `content-length` alone, a 401) has the rest of its body read and thrown away before the answer
 *   goes out, so a caller still sending reads the answer instead of a reset connection; at most
 *   `maxBytes` bytes more and `maxMs` ms, then the answer goes out and the connection is closed.
 *   Default {@link DEFAULT_BODY_DRAIN}: 16 MiB and 10 000 ms.
 * - `retryAfter`: `Retry-After` defaults, seconds (errors.ts `DEFAULT_RETRY_AFTER`: 1 and 2).
 * - `spentOutStatus`: the status of a `SpentOut` that only the period's end clears, 429 (default)
 *   or 403, which generic retry logic does not retry (errors.ts `SpentOutStatus`;
 *   docs/design/rules.md#d13).
 * - `routes`: the route files; default every route of the service (`routes/index.ts`).
 * - `dashboard`: serve the operator dashboard at `/ui/` with these options; default none.
 * - `readiness`: why the service is not ready now (the store is not open yet, the server is
 *   stopping), or `null` when it is; `/readyz` answers 503 with that reason before it reads the
 *   store. Default: always ready as far as the caller knows.
 * - `metricsTenants`: how many tenants get their own per-tenant series on `/metrics` (the busiest
 *   ones; the rest are summed into `tenant="other"`); default `DEFAULT_METRICS_TENANTS`.
 */
export interface BuildAppOptions {
  readonly plane: Plane;
  readonly store: QuotaStore;
  readonly keys: ApiKeyStore;
  readonly logger?: FastifyBaseLogger | undefined;
  readonly clock?: Clock | undefined;
  readonly bodyLimitBytes?: number | undefined;
  readonly bodyDrain?: BodyDrainBounds | undefined;
  readonly retryAfter?: Partial<RetryAfterDefaults> | undefined;
  readonly spentOutStatus?: SpentOutStatus | undefined;
  readonly routes?: readonly RouteModule[] | undefined;
  readonly dashboard?: DashboardOptions | undefined;
  readonly readiness?: (() => string | null) | undefined;
  readonly metricsTenants?: number | undefined;
}

/**
 * Builds the HTTP service: a Fastify app with every route, authentication by API key,
 * strict TypeBox validation, one problem+json error envelope, request ids, `/metrics` and
 * `/openapi.json`. It never listens by itself: `quotaplane serve` calls `listen`, tests call
 * `app.inject()`. Resolves once the app is ready; close it with `app.close()` (the store is the
 * caller's to close).
 *
 * @example
 * const app = await buildApp({ plane: createPlane({ store }), store, keys: store.apiKeys() });
 * await app.listen({ host: '127.0.0.1', port: 7070 });
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const retryAfter: RetryAfterDefaults = { ...DEFAULT_RETRY_AFTER, ...(options.retryAfter ?? {}) };
  const clock = options.clock ?? systemClock;
  const metrics = createServiceMetrics({
    plane: options.plane,
    nowMs: () => clock.nowMs(),
    ...(options.store.webhooks === undefined ? {} : { webhookOldestPendingAtMs: async () => options.store.webhooks!().oldestPendingAtMs() }),
    ...(options.metricsTenants === undefined ? {} : { tenantSeries: options.metricsTenants }),
  });
  const context: RouteContext = {
    readiness: options.readiness ?? (() => null),
    keys: options.keys,
    plane: metrics.meter(options.plane),
    store: options.store,
    clock,
    metrics,
    retryAfter,
    spentOutStatus: options.spentOutStatus ?? 429,
  };

  const send = (reply: FastifyReply, { problem, headers }: ProblemReply) =>
    reply.code(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));

  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    genReqId: requestIdGenerator(),
    // Fastify's response serializers, compiled once per process for each schema (serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: cachedSerializerFactory } },
    // One log line per request, written when it ends (see the onResponse hook), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Keep the route's own behaviour for `/x/` instead of answering 404 on a stray slash. A path
    // parameter as long as any identifier, percent-encoded, reaches the route, whose own rule
    // answers (the router's default of 100 characters refused ids that admission had accepted).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // A path the router cannot decode (`/%ZZ`) or a parameter longer than any identifier fails
    // before any route and before the onSend hook: answer it in the envelope, with its request id.
    frameworkErrors: (error, request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      send(reply, errorProblem(error, { requestId: request.id, retryAfter, logInternal: (cause) => request.log.error({ err: cause }, 'request failed unexpectedly') }));
    },
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(strictValidatorCompiler());
  // Bodies are JSON only: without Fastify's text/plain parser a text body answers 415, as documented.
  app.removeContentTypeParser('text/plain');
  // `PATCH …/quota` takes a JSON Merge Patch (RFC 7396) under its own media type, parsed as JSON.
  app.addContentTypeParser(MERGE_PATCH_CONTENT_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  // The process's sweeper reports each sweep here, for /metrics (sweep-metrics.ts).
  app.decorate('observeSweep', metrics.observeSweep);
  // The process's webhook dispatcher counts each attempt here (webhook-metrics.ts).
  app.decorate('observeWebhookAttempt', metrics.observeWebhookAttempt);
  app.decorateRequest('apiKey', null);
  app.decorateRequest('problemCode', null);

  app.setErrorHandler((error, request, reply) => {
    // A store that could not answer is an operational fault: logged with its cause at warn (the
    // request failed closed), where a 500 is logged at error by logInternal.
    if (error instanceof QuotaError && error.code === 'STORE_UNAVAILABLE') request.log.warn({ err: error }, 'the store could not answer; failed closed');
    return send(
      reply,
      errorProblem(error, {
        requestId: request.id,
        retryAfter,
        logInternal: (cause) => request.log.error({ err: cause }, 'request failed unexpectedly'),
        bodyLimitBytes: request.routeOptions.bodyLimit,
        covers: (tenant) => request.apiKey !== null && keyCoversTenant(request.apiKey, tenant),
      }),
    );
  });
  app.setNotFoundHandler((request, reply) =>
    send(
      reply,
      errorProblem(new HttpProblem('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0] ?? ''}; see /openapi.json`), {
        requestId: request.id,
        retryAfter,
        logInternal: () => undefined,
      }),
    ),
  );

  // Which keys were used, written at most once a minute per key, never awaited by a request.
  const keyUses = createKeyUseRecorder(options.keys, (error) => app.log.warn({ err: error }, 'could not record when API keys were last used'));
  app.addHook('onClose', async () => keyUses.flush());
  // Authentication runs before the body is read or validated, so a caller without a valid key
  // learns nothing from a 400 and cannot make the server parse a large body.
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access ?? 'public';
    if (access === 'public') return;
    const nowMs = context.clock.nowMs();
    const key = await authenticate(request.headers.authorization, options.keys, nowMs, {
      cookie: request.headers.cookie,
      method: request.method,
      csrf: request.headers[CSRF_HEADER],
    });
    request.apiKey = key;
    keyUses.note(key, nowMs);
    authorize(access, key, (request.params as { tenant?: string } | undefined)?.tenant);
  });
  // A POST with no body at all reads as `{}`, so the schema names the missing member.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PUT')) request.body = {};
  });
  // Once closing starts, answers to requests still in flight end their connection: a kept-alive
  // socket would otherwise hold `close()` open for the whole keep-alive timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A request answered before its body has all arrived (a 413 from the content-length alone, a 401)
  // has the rest read and thrown away first, within bounds: closing on a caller still sending
  // resets the connection, and the caller never reads the answer (body-drain.ts).
  const bodyDrain = options.bodyDrain ?? DEFAULT_BODY_DRAIN;
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.raw.complete === false && (await drainBody(request.raw, bodyDrain)) !== 'read') reply.header('connection', 'close');
    reply.header(REQUEST_ID_HEADER, request.id);
    if (closing) reply.header('connection', 'close');
    if (reply.statusCode >= 400 && typeof payload === 'string') request.problemCode = problemCodeOf(payload);
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    request.log.info(requestLogLine(request, reply), 'request');
  });

  // The error envelope, shared by every route's error replies (schemas/common.ts).
  app.addSchema(Problem);
  await app.register(swagger, {
    // Shared schemas keep their own $id as their name in components.schemas (default: def-0, …).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'quotaplane',
        version,
        description:
          'Per-tenant admission control for AI-agent platforms. Errors are RFC 9457 problem details ' +
          '(application/problem+json) with a stable `code`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'a key from `quotaplane keys create`' } } },
    },
  });
  for (const route of options.routes ?? ROUTES) route(app, context);
  if (options.dashboard !== undefined) registerDashboard(app, options.dashboard);
  await app.ready();
  return app;
}

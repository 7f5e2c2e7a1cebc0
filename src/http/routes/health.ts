import { Type } from '@sinclair/typebox';

import { QuotaError } from '../../core/errors.js';
import { HttpProblem } from '../errors.js';
import type { RouteModule } from '../route-context.js';
import { PROBLEM_REPLIES, strictObject } from '../schemas/common.js';

/** The tenant id `/readyz` probes: a slot count over an empty tenant prefix, the cheapest real store read. */
export const READINESS_PROBE_TENANT = 'quotaplane-readiness-probe';

const HealthReply = strictObject({ status: Type.Literal('ok') });
const ReadyReply = strictObject({ status: Type.Literal('ready'), backend: Type.String() });

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the store answers a read; otherwise 503
 * `STORE_UNAVAILABLE` with `Retry-After`). Both public: they name no tenant.
 */
export const healthRoutes: RouteModule = (app, context) => {
  app.get(
    '/healthz',
    {
      config: { access: 'public' },
      schema: { operationId: 'health', summary: 'The process is up', tags: ['service'], response: { 200: HealthReply } },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { access: 'public' },
      schema: { operationId: 'ready', summary: 'The store answers: ready to decide', tags: ['service'], response: { 200: ReadyReply, ...PROBLEM_REPLIES } },
    },
    async () => {
      const notReady = context.readiness();
      if (notReady !== null) throw new HttpProblem('STORE_UNAVAILABLE', `not ready: ${notReady}`);
      try {
        await context.store.tenant(READINESS_PROBE_TENANT).running();
      } catch (error) {
        const why = error instanceof QuotaError ? error.message : 'the store did not answer';
        throw new HttpProblem('STORE_UNAVAILABLE', `not ready: ${why}`);
      }
      return { status: 'ready' as const, backend: context.store.backend };
    },
  );
};

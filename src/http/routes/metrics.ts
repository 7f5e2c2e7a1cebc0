import type { RouteModule } from '../route-context.js';
import { PROBLEM_REPLIES } from '../schemas/common.js';

/**
 * `GET /metrics`: Prometheus text from the app's own registry. It names every
 * tenant (the per-tenant gauges), so it takes an operator key for every tenant; point Prometheus
 * at it with `authorization: { credentials: <key> }` in the scrape config.
 */
export const metricsRoutes: RouteModule = (app, context) => {
  app.get(
    '/metrics',
    {
      config: { access: 'operator-all-tenants' },
      schema: {
        operationId: 'metrics',
        summary: 'Prometheus metrics: admissions, refusals by code, settle and dispatch outcomes, latencies, per-tenant gauges',
        tags: ['service'],
        security: [{ bearer: [] }],
        // The 200 is Prometheus text, sent as a string (never serialized): documented so a client
        // knows what the route answers at all.
        response: {
          200: {
            description: 'The Prometheus text exposition format, version 0.0.4',
            content: { 'text/plain': { schema: { type: 'string', description: 'Prometheus text: # HELP, # TYPE and one sample per line' } } },
          },
          ...PROBLEM_REPLIES,
        },
      },
    },
    async (_request, reply) => {
      const text = await context.metrics.registry.metrics();
      return reply.type(context.metrics.registry.contentType).send(text);
    },
  );
};

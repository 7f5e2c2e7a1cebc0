import { Type, type Static } from '@sinclair/typebox';

import { callerInstant, operatorScope } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { described, Identifier, InstantMs, strictObject } from '../schemas/common.js';
import { SweepReply } from '../schemas/operator.js';

const SweepBody = strictObject({
  tenant: Type.Optional(described(Identifier, 'one tenant the key covers; default every tenant it covers')),
  atMs: Type.Optional(InstantMs),
});

/**
 * `POST /v1/sweep`: one sweep of lapsed leases now, of the `tenant` named or,
 * without one, of every tenant the key covers. `serve` already sweeps on an interval; this is for
 * an operator who will not wait for it (`quotaplane sweep --url …`).
 */
export const sweepRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof SweepBody> }>(
    '/v1/sweep',
    protectedRoute('operator', {
      operationId: 'sweep',
      summary: 'Sweep lapsed leases now: free the slots of dead runs and mark them stranded, keeping their holds',
      body: SweepBody,
      reply: SweepReply,
    }),
    async (request) =>
      context.plane.sweep({ tenant: operatorScope(request, request.body.tenant), atMs: callerInstant(request, request.body.atMs) }),
  );
};

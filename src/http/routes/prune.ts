import { Type, type Static } from '@sinclair/typebox';

import { callerInstant, operatorOf, operatorScope } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { described, Identifier, InstantMs, strictObject } from '../schemas/common.js';
import { MAX_PRUNE_BATCH } from '../../store/retention.js';

const PruneBody = strictObject({
  olderThanMs: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Age in milliseconds a closed run must have' }),
  tenant: Type.Optional(described(Identifier, 'one tenant the key covers; default every tenant it covers')),
  dryRun: Type.Optional(Type.Boolean({ description: 'count what would go and remove nothing (no audit row either); default false' })),
  batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PRUNE_BATCH, description: 'runs per batch, one store transaction each; default 50' })),
  atMs: Type.Optional(InstantMs),
});

const Counts = {
  runs: Type.Integer(),
  passes: Type.Integer(),
  receipts: Type.Integer(),
  rateDispatches: Type.Integer(),
};

/** What a prune removed, or would remove (plane `PruneResult`). */
export const PruneReply = strictObject({
  atMs: Type.Integer(),
  olderThanMs: Type.Integer(),
  dryRun: Type.Boolean(),
  closedAtOrBeforeMs: Type.Integer(),
  rateAtOrBeforeMs: Type.Integer(),
  tenants: Type.Array(strictObject({ tenant: Type.String(), ...Counts })),
  total: strictObject(Counts),
  stopped: Type.Boolean(),
});

/**
 * `POST /v1/prune` (docs/design/rules.md#r1): retention now, of the `tenant` named or, without one, of
 * every tenant the operator key covers; recorded under the key's name. The server prunes in
 * batches and answers when it is done (or, with `dryRun`, what would go). `quotaplane prune --url …`
 * calls it; `serve --prune-older-than` prunes on an interval instead.
 */
export const pruneRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof PruneBody> }>(
    '/v1/prune',
    protectedRoute('operator', {
      operationId: 'prune',
      summary: 'Prune closed runs, their passes and receipts, and rate instants no window counts, older than an age (audited)',
      body: PruneBody,
      reply: PruneReply,
    }),
    async (request) =>
      context.plane.prune({
        olderThanMs: request.body.olderThanMs,
        tenant: operatorScope(request, request.body.tenant),
        dryRun: request.body.dryRun,
        batchSize: request.body.batchSize,
        atMs: callerInstant(request, request.body.atMs),
        by: operatorOf(request),
      }),
  );
};

import { Type, type Static } from '@sinclair/typebox';

import type { RunStatus } from '../../store/types.js';
import { callerInstant, operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { described, Identifier, InstantMs, RunParams, strictObject, TenantParams } from '../schemas/common.js';
import { MAX_STRANDED_RELEASE, releaseStranded } from '../../plane/release.js';
import { ReleaseReply, RunStatus as RunStatusSchema, RunsPage, RunsQuery, SETTLE_FIELDS, SettleReply, StrandedReleaseReply } from '../schemas/operator.js';

const TenantRunParams = strictObject({ tenant: TenantParams.properties.tenant, run: RunParams.properties.run });
const OperatorSettleBody = strictObject(SETTLE_FIELDS);
const ReleaseBody = strictObject({
  atMs: Type.Optional(InstantMs),
  ifStatus: Type.Optional(described(RunStatusSchema, 'release only a run whose status is this one now; otherwise 409 CONFLICT and nothing is written')),
});
const StrandedReleaseBody = strictObject({
  runs: Type.Optional(
    Type.Array(Identifier, {
      maxItems: MAX_STRANDED_RELEASE,
      description: 'release only these runs (the ones a person confirmed); any no longer stranded is skipped. Absent: every stranded run',
    }),
  ),
  atMs: Type.Optional(InstantMs),
});

/**
 * A tenant's runs for operators: `GET /v1/tenants/{tenant}/runs?status=&after=&limit=`
 * pages the run registry (`status` a comma-separated list such as `stranded,withheld`; `next` is
 * the `after` of the following page), and the two acts the attention remedies name:
 * `POST …/runs/{run}/settle` settles a pass with its real spend (`{ epoch, spend, concludes }`) and
 * `POST …/runs/{run}/release` gives back the run's slot and hold. Both are audited in the store's
 * transaction under the key's name, basis `authenticated`. `POST …/runs/release-stranded` releases
 * every stranded run (or the confirmed `runs` still stranded), each as the single release, and
 * answers per run what happened (plane release.ts `releaseStranded`).
 */
export const tenantRunRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof RunsQuery> }>(
    '/v1/tenants/:tenant/runs',
    protectedRoute('operator', {
      operationId: 'listRuns',
      summary: 'The run registry by run id: status and since when, latest pass, slot, lease; ?status=stranded,withheld filters',
      params: TenantParams,
      querystring: RunsQuery,
      reply: RunsPage,
    }),
    async (request) => {
      const { status, after, limit } = request.query;
      const statuses = status === undefined ? undefined : (status.split(',') as RunStatus[]);
      return context.plane.runs({ tenant: request.params.tenant, statuses, after, limit });
    },
  );

  app.post<{ Params: Static<typeof TenantRunParams>; Body: Static<typeof OperatorSettleBody> }>(
    '/v1/tenants/:tenant/runs/:run/settle',
    protectedRoute('operator', {
      operationId: 'operatorSettle',
      summary: "Settle a pass's real spend for a runner that cannot (audited as run.settle); a conflicting settle 409",
      params: TenantRunParams,
      body: OperatorSettleBody,
      reply: SettleReply,
    }),
    async (request) =>
      context.plane.settle({
        ...request.body,
        tenant: request.params.tenant,
        run: request.params.run,
        atMs: callerInstant(request, request.body.atMs),
        by: operatorOf(request),
      }),
  );

  app.post<{ Params: Static<typeof TenantRunParams>; Body: Static<typeof ReleaseBody> }>(
    '/v1/tenants/:tenant/runs/:run/release',
    protectedRoute('operator', {
      operationId: 'release',
      summary: "Give back a run's slot and hold and close it as released (audited as run.release)",
      params: TenantRunParams,
      body: ReleaseBody,
      reply: ReleaseReply,
    }),
    async (request) =>
      context.plane.release({
        tenant: request.params.tenant,
        run: request.params.run,
        atMs: callerInstant(request, request.body.atMs),
        by: operatorOf(request),
        ifStatus: request.body.ifStatus,
      }),
  );

  app.post<{ Params: Static<typeof TenantParams>; Body: Static<typeof StrandedReleaseBody> }>(
    '/v1/tenants/:tenant/runs/release-stranded',
    protectedRoute('operator', {
      operationId: 'releaseStranded',
      summary: "Release a tenant's stranded runs, each audited as run.release; answers per run (released, skipped, failed)",
      params: TenantParams,
      body: StrandedReleaseBody,
      reply: StrandedReleaseReply,
    }),
    async (request) => {
      const by = operatorOf(request);
      const atMs = callerInstant(request, request.body.atMs);
      return releaseStranded(
        { runs: (input) => context.plane.runs(input), release: (input) => context.plane.release({ ...input, by, atMs }) },
        request.params.tenant,
        { only: request.body.runs },
      );
    },
  );
};

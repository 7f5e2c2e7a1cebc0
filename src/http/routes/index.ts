import type { RouteModule } from '../route-context.js';
import { attentionRoutes } from './attention.js';
import { auditRoutes } from './audit.js';
import { callCeilingRoutes } from './call-ceilings.js';
import { dispatchRoutes } from './dispatches.js';
import { eventRoutes } from './events.js';
import { haltRoutes } from './halts.js';
import { healthRoutes } from './health.js';
import { keyIdentityRoutes } from './key.js';
import { keyRoutes } from './keys.js';
import { metricsRoutes } from './metrics.js';
import { modelCallRoutes } from './model-calls.js';
import { openApiRoutes } from './openapi.js';
import { planeRoutes } from './plane.js';
import { pruneRoutes } from './prune.js';
import { quotaRoutes } from './quota.js';
import { reservationRoutes } from './reservations.js';
import { runRoutes } from './runs.js';
import { sessionRoutes } from './session.js';
import { slotRoutes } from './slots.js';
import { spendHistoryRoutes } from './spend-history.js';
import { sweepRoutes } from './sweep.js';
import { tenantRoutes } from './tenants.js';
import { tenantRunRoutes } from './tenant-runs.js';
import { usageRoutes } from './usage.js';
import { webhookRoutes } from './webhooks.js';

/**
 * Every route file of the service, registered in this order by `buildApp`. A new resource is one
 * file under `routes/` and one entry here.
 */
export const ROUTES: readonly RouteModule[] = [
  healthRoutes,
  metricsRoutes,
  openApiRoutes,
  runRoutes,
  dispatchRoutes,
  usageRoutes,
  quotaRoutes,
  haltRoutes,
  tenantRunRoutes,
  slotRoutes,
  reservationRoutes,
  attentionRoutes,
  auditRoutes,
  eventRoutes,
  sweepRoutes,
  tenantRoutes,
  spendHistoryRoutes,
  keyIdentityRoutes,
  keyRoutes,
  sessionRoutes,
  planeRoutes,
  pruneRoutes,
  webhookRoutes,
  modelCallRoutes,
  callCeilingRoutes,
];

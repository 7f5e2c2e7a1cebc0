// The `quotaplane/http` entry: the HTTP service for embedders who run it inside their own
// process. Listed name by name, like the package entry. `quotaplane serve` is the
// ready-made server; this is the same app without the process around it.
export { buildApp, DEFAULT_BODY_LIMIT_BYTES, type BuildAppOptions } from './build-app.js';
export { API_KEY_PREFIX, generateApiKeySecret, hashApiKey, mintApiKey, type MintedApiKey } from './api-key-secret.js';
export {
  DEFAULT_RETRY_AFTER,
  PROBLEM_CONTENT_TYPE,
  SPENT_OUT_STATUSES,
  statusOf,
  type Problem,
  type ProblemCode,
  type RetryAfterDefaults,
  type SpentOutStatus,
} from './errors.js';
export type { RouteAccess } from './auth.js';
export type { RouteContext, RouteModule } from './route-context.js';
export { ROUTES } from './routes/index.js';
export { DASHBOARD_CSP, DEFAULT_MONEY_DISPLAY, type DashboardOptions, type MoneyDisplay } from './dashboard.js';
export { createMemoryApiKeyStore } from '../store/memory-api-keys.js';

// The `quotaplane/ai-sdk` entry: metering for agents written with the Vercel AI SDK (`ai`, an
// optional peer dependency). Use it inside `withRun` from the main entry. Listed name by name.
export { quotaMiddleware, type QuotaMiddlewareOptions } from './middleware.js';
export { meterTools, type MeterToolsOptions } from './tools.js';
export { tokenCountsOf } from './usage.js';
export type { ModelPrice, PriceTable, TokenCounts } from '../model-price.js';
export type { ToolGrants } from '../tool-grants.js';

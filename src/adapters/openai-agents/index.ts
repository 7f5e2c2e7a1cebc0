// The `quotaplane/openai-agents` entry: metering for agents written with the OpenAI Agents SDK
// (`@openai/agents`, an optional peer dependency). Use it inside `withRun` from the main entry.
// Listed name by name.
export { meterModel, meterModelProvider, type MeterModelOptions } from './model.js';
export { meterTools, type MeterToolsOptions } from './tools.js';
export { agentsTokenCounts } from './usage.js';
export type { ModelPrice, PriceTable, TokenCounts } from '../model-price.js';
export type { ToolGrants } from '../tool-grants.js';

// The `quotaplane/openai-agents` entry: metering for agents written with the OpenAI Agents SDK
// (`@openai/agents`, an optional peer dependency). Use it inside `withRun` from the main entry.
// Listed name by name.
export { meterModel, meterModelProvider, type MeterModelOptions } from './model.js';
export { meterModelCalls, type MeterModelCallsOptions } from './call-ceiling.js';
export { meterTools, type MeterToolsOptions } from './tools.js';
export { agentsTokenCounts } from './usage.js';
export type { ModelPrice, PriceTable, TokenCounts } from '../model-price.js';
export type { ToolGrants } from '../tool-grants.js';
export type { CallCeilingOptions, CallCeilingPlane } from '../call-ceiling.js';
export { ModelCallLimitedError } from '../run-errors.js';
export { CALL_OVERHEAD_TOKENS, CHARS_PER_TOKEN, estimateInputTokens, FILE_PART_TOKENS, MESSAGE_OVERHEAD_TOKENS } from '../input-tokens.js';
export type { CallLimitedRefusal, CallNeverFitsRefusal, CallRefusal } from '../../core/call-refusal.js';

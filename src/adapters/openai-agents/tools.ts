import type { Tool } from '@openai/agents';

import type { ActiveRun } from '../active-run.js';
import { ToolCallRefusedError } from '../run-errors.js';
import { gateToolCall, parseToolGrants, type ToolGrants } from '../tool-grants.js';

/** Options of {@link meterTools}: `grants`, which grant each tool's calls dispatch (see `ToolGrants`). */
export interface MeterToolsOptions {
  readonly grants: ToolGrants;
}

/**
 * Makes each call of the Agents SDK function tools in `tools` a dispatch of its grant in `run`,
 * before the tool runs, by adding a tool input guardrail named `quotaplane` (the tool itself, its
 * input parsing and approvals are untouched): `run.dispatch(grant, callId)`, so a retried call
 * with the same id is counted once.
 *
 * - `RateLimited` or `UncountableRate`: the guardrail rejects the call with a message the model
 *   sees (the tool did not run; the message says when to retry) and the run goes on;
 * - `Withheld`: the guardrail throws `RunWithheldError`, which ends the Runner's run; `withRun`
 *   then settles the pass without concluding.
 *
 * Tools other than function tools (hosted tools, computer, shell) are returned as they are.
 * Answers new tool objects; `tools` is not changed. Throws `INVALID_ARGUMENT` naming a malformed grant.
 */
export function meterTools<T extends Tool<any>>(run: ActiveRun, tools: readonly T[], options: MeterToolsOptions): T[] {
  const grants = parseToolGrants(options.grants);
  return tools.map((tool) => {
    if (tool.type !== 'function') return tool;
    const guardrail = {
      type: 'tool_input' as const,
      name: 'quotaplane',
      async run({ toolCall }: { toolCall: { callId: string } }) {
        try {
          await gateToolCall(run, grants, tool.name, toolCall.callId);
        } catch (error) {
          if (error instanceof ToolCallRefusedError) return { behavior: { type: 'rejectContent' as const, message: error.message } };
          throw error;
        }
        return { behavior: { type: 'allow' as const } };
      },
    };
    const existing = (tool as { inputGuardrails?: readonly unknown[] }).inputGuardrails ?? [];
    return { ...tool, inputGuardrails: [...existing, guardrail] } as T;
  });
}

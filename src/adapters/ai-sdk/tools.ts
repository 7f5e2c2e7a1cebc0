import type { ToolExecutionOptions, ToolSet } from 'ai';

import type { ActiveRun } from '../active-run.js';
import { gateToolCall, parseToolGrants, type ToolGrants } from '../tool-grants.js';

/** Options of {@link meterTools}: `grants`, which grant each tool's calls dispatch (see `ToolGrants`). */
export interface MeterToolsOptions {
  readonly grants: ToolGrants;
}

/**
 * Wraps the AI SDK tools of `tools` (a `ToolSet`, as `generateText` takes it) so that each call of a
 * tool is a dispatch of its grant in `run`, before the tool runs: `run.dispatch(grant, toolCallId)`
 * (a retried call with the same id is counted once). A `RateLimited` or `UncountableRate` refusal
 * throws `ToolCallRefusedError` out of `execute`: the tool does not run and the model sees a tool
 * error that says when to retry. `Withheld` throws `RunWithheldError` and stops the run. Tools
 * without `execute` (client-side tools) are returned as they are. Answers a new set; `tools` is
 * not changed. Throws `INVALID_ARGUMENT` naming a malformed grant.
 */
export function meterTools<TOOLS extends ToolSet>(run: ActiveRun, tools: TOOLS, options: MeterToolsOptions): TOOLS {
  const grants = parseToolGrants(options.grants);
  const metered: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (execute === undefined) {
      metered[name] = tool;
      continue;
    }
    const gate = (callOptions: ToolExecutionOptions) => gateToolCall(run, grants, name, callOptions.toolCallId);
    // A tool that streams its output (an async generator) stays one, gated before its first value.
    metered[name] = {
      ...tool,
      execute: isAsyncGeneratorFunction(execute)
        ? async function* (input: unknown, callOptions: ToolExecutionOptions) {
            await gate(callOptions);
            yield* execute(input as never, callOptions) as AsyncIterable<unknown>;
          }
        : async (input: unknown, callOptions: ToolExecutionOptions) => {
            await gate(callOptions);
            return execute(input as never, callOptions);
          },
    };
  }
  return metered as TOOLS;
}

function isAsyncGeneratorFunction(value: unknown): boolean {
  return typeof value === 'function' && value.constructor.name === 'AsyncGeneratorFunction';
}

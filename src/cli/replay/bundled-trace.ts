import { fileURLToPath } from 'node:url';

/**
 * The trace `quotaplane replay` reads when it is given no file: the conversation trace of the Azure
 * LLM inference trace 2023 (19,366 requests), kept unmodified in `data/azure-llm-2023/` with its
 * CC BY 4.0 credit. The path is resolved from this module, which sits three folders below the
 * package root both as source (`src/cli/replay/`) and as built code (`dist/cli/replay/`), so it
 * finds the file in a clone and in an installed package (whose `files` ship this trace) alike.
 */
export const BUNDLED_TRACE_PATH = fileURLToPath(new URL('../../../data/azure-llm-2023/conv.csv', import.meta.url));

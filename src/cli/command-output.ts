import type { OutputConfiguration } from 'commander';

import type { ExitStatus } from './exit-status.js';
import type { CliIo } from './io.js';

/** What a command's action reports back to `main`: the exit status it decided on. */
export type SetExitStatus = (status: ExitStatus) => void;

/**
 * Commander's output through `io`. Its own error messages (an unknown flag, a bad value) are
 * folded onto one line, which names the flag, and end by saying where the usage is.
 */
export function outputFor(io: CliIo, helpCommand: string): OutputConfiguration {
  return {
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')} (see '${helpCommand}')\n`),
  };
}

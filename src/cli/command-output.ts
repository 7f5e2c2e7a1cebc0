import type { Command, OutputConfiguration } from 'commander';

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
    // Help wraps to the terminal's width (80 when it is not a terminal), never mid-word.
    getOutHelpWidth: () => io.stdout.columns ?? 80,
    getErrHelpWidth: () => io.stderr.columns ?? 80,
    outputError: (text, write) => {
      const line = `${text.trim().replace(/\s*\n\s*/g, ' ')} (see '${helpCommand}')`;
      if (io.jsonErrors !== true) return write(`${line}\n`);
      write(`${JSON.stringify({ error: { code: 'USAGE', message: line.replace(/^error: /, ''), exitStatus: 2 } })}\n`);
    },
  };
}

/**
 * Joins the line breaks written inside a paragraph of a help text, so commander wraps each
 * paragraph to the terminal's width instead of keeping a break made for another width (which cut
 * sentences short mid-line on a narrow terminal). Blank lines and lines that start with a space
 * (lists, examples) are kept as written.
 */
export function reflowParagraphs(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    const previous = out[out.length - 1];
    if (previous !== undefined && previous !== '' && line !== '' && !/^\s/.test(line) && !/^\s/.test(previous)) {
      out[out.length - 1] = `${previous.trimEnd()} ${line.trimStart()}`;
    } else {
      out.push(line);
    }
  }
  return out.join('\n');
}

/** Applies {@link reflowParagraphs} to the description of `command` and of every command under it. */
export function reflowDescriptions(command: Command): void {
  command.description(reflowParagraphs(command.description()));
  for (const sub of command.commands) reflowDescriptions(sub);
}

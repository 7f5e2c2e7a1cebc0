/**
 * Where the CLI writes. `main` never touches `process.stdout`/`process.stderr` itself, so tests run
 * commands in process and read exactly what a person would see. `isTTY` decides whether a progress
 * bar is drawn (only on a terminal).
 */
export interface CliStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** The two output streams of one CLI invocation: results on `stdout`, diagnostics and progress on `stderr`. */
export interface CliIo {
  readonly stdout: CliStream;
  readonly stderr: CliStream;
  /** The command line asked for `--json`: failures, usage errors included, are JSON on stderr too. */
  readonly jsonErrors?: boolean;
  /** Reads standard input to its end (`--file -`); absent, the process's own stdin is read. */
  readonly readStdin?: () => Promise<string>;
}

/** Writes `text` and a line break to `stream`. */
export function writeLine(stream: CliStream, text = ''): void {
  stream.write(`${text}\n`);
}

import cliProgress from 'cli-progress';

import type { CliStream } from '../io.js';

/** How long a replay runs before it shows a progress bar, ms (short replays stay quiet). */
export const PROGRESS_AFTER_MS = 1_000;

/**
 * A progress bar on stderr for replays that take longer than {@link PROGRESS_AFTER_MS}: bytes of
 * the trace consumed (the trace is streamed, so its row count is unknown until the end) and rows
 * replayed. It is drawn only on a terminal, so redirected stderr and `--json` output stay clean.
 */
export class ReplayProgress {
  readonly #stream: CliStream;
  readonly #afterMs: number;
  #totalBytes = 0;
  #bar: cliProgress.SingleBar | null = null;
  #ended = false;

  constructor(stream: CliStream, afterMs = PROGRESS_AFTER_MS) {
    this.#stream = stream;
    this.#afterMs = afterMs;
  }

  /** The replay starts; `totalBytes` is the trace's size. */
  begin(totalBytes: number): void {
    this.#totalBytes = totalBytes;
  }

  /** One row replayed: `bytes` of the trace consumed, `rows` so far, `elapsedMs` since the start. */
  update(bytes: number, rows: number, elapsedMs: number): void {
    if (this.#bar === null) {
      if (this.#ended || elapsedMs < this.#afterMs || this.#stream.isTTY !== true) return;
      this.#bar = new cliProgress.SingleBar(
        {
          stream: this.#stream as unknown as NodeJS.WritableStream,
          format: 'replay |{bar}| {percentage}% | {rows} rows | {eta_formatted} left',
          hideCursor: true,
          clearOnComplete: true,
        },
        cliProgress.Presets.shades_classic,
      );
      this.#bar.start(Math.max(this.#totalBytes, 1), bytes, { rows });
      return;
    }
    this.#bar.update(bytes, { rows });
  }

  /** The replay ended (or failed): stop drawing and give the terminal line back. */
  end(): void {
    this.#ended = true;
    if (this.#bar === null) return;
    this.#bar.update(this.#totalBytes);
    this.#bar.stop();
    this.#bar = null;
  }
}

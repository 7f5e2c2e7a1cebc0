import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parse } from 'csv-parse';
import { UsageError } from '../usage-error.js';

/** The header every trace starts with (the Azure LLM inference trace 2023 format). */
export const TRACE_COLUMNS = Object.freeze(['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const);

/** One request of the trace: when it arrived and how many tokens went in and came out. */
export interface TraceRow {
  /** 1-based line number in the file (the header is line 1). */
  readonly line: number;
  /** Arrival instant, Unix ms, reading the trace's timestamp as UTC (the trace states no zone). */
  readonly arrivalMs: number;
  readonly contextTokens: number;
  readonly generatedTokens: number;
  /** Bytes of the file consumed up to and including this row (drives the progress bar). */
  readonly bytesRead: number;
}

/** An opened trace: its size for progress, and its rows in file order. */
export interface Trace {
  readonly path: string;
  readonly sizeBytes: number;
  readonly rows: AsyncIterable<TraceRow>;
}

/**
 * Opens a trace in the format of `data/azure-llm-2023/`: header
 * `TIMESTAMP,ContextTokens,GeneratedTokens`, timestamps `YYYY-MM-DD HH:MM:SS.fffffff`, CRLF or LF,
 * final line break optional. Rows stream through `csv-parse`, so a trace of any length is read in
 * constant memory.
 *
 * Throws {@link UsageError} when the file cannot be read; iterating `rows` throws {@link UsageError}
 * for the first malformed row, naming its line and column: a wrong header, a wrong number of fields,
 * a bad timestamp, a token count that is not a non-negative integer, or a timestamp earlier than
 * the row before. No row is ever skipped; only one blank line at the very end is tolerated.
 */
export async function openTrace(path: string): Promise<Trace> {
  let sizeBytes: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error('not a regular file');
    sizeBytes = info.size;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`cannot read trace ${path} (${reason}); pass the path of a CSV trace file`);
  }
  return { path, sizeBytes, rows: readRows(path) };
}

async function* readRows(path: string): AsyncGenerator<TraceRow> {
  const name = basename(path);
  const source = createReadStream(path);
  const parser = parse({ bom: true, info: true, relax_column_count: true });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);

  let previous: { line: number; arrivalMs: number } | null = null;
  let blankLine: number | null = null;
  let sawHeader = false;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number; bytes: number } }>) {
      const { record, info } = item;
      const line = info.lines;
      if (blankLine !== null) {
        throw new UsageError(`${name} line ${blankLine}: blank line inside the trace; remove it or fill in the row`);
      }
      if (!sawHeader) {
        checkHeader(name, line, record);
        sawHeader = true;
        continue;
      }
      if (record.length === 1 && record[0] === '') {
        blankLine = line;
        continue;
      }
      const row = parseRow(name, line, record, info.bytes);
      if (previous !== null && row.arrivalMs < previous.arrivalMs) {
        throw new UsageError(
          `${name} line ${line}, column 1 (TIMESTAMP): ${record[0]} is earlier than line ${previous.line}; ` +
            `rows must be in arrival order`,
        );
      }
      previous = { line, arrivalMs: row.arrivalMs };
      yield row;
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw describeParseFailure(name, path, error);
  } finally {
    source.destroy();
  }
  if (!sawHeader) {
    throw new UsageError(`${name} line 1: the file is empty; a trace starts with the header ${TRACE_COLUMNS.join(',')}`);
  }
}

function checkHeader(name: string, line: number, record: readonly string[]): void {
  const same = record.length === TRACE_COLUMNS.length && record.every((field, index) => field === TRACE_COLUMNS[index]);
  if (!same) {
    throw new UsageError(
      `${name} line ${line}: the header must be ${TRACE_COLUMNS.join(',')}, got ${JSON.stringify(record.join(','))}`,
    );
  }
}

function parseRow(name: string, line: number, record: readonly string[], bytesRead: number): TraceRow {
  if (record.length !== TRACE_COLUMNS.length) {
    throw new UsageError(
      `${name} line ${line}: expected ${TRACE_COLUMNS.length} fields (${TRACE_COLUMNS.join(',')}), got ${record.length}`,
    );
  }
  const [timestamp, context, generated] = record as [string, string, string];
  return {
    line,
    arrivalMs: parseTimestamp(name, line, timestamp),
    contextTokens: parseCount(name, line, 2, context),
    generatedTokens: parseCount(name, line, 3, generated),
    bytesRead,
  };
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

/**
 * `YYYY-MM-DD HH:MM:SS[.fraction]` read as UTC, truncated to whole milliseconds
 * (docs/design/decisions.md "Time in milliseconds"). Impossible dates such as February 30 are rejected, not rolled over.
 */
function parseTimestamp(name: string, line: number, text: string): number {
  const match = TIMESTAMP.exec(text);
  const fail = (): never => {
    throw new UsageError(
      `${name} line ${line}, column 1 (TIMESTAMP): expected YYYY-MM-DD HH:MM:SS.fffffff, got ${JSON.stringify(text)}`,
    );
  };
  if (match === null) return fail();
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number, number, number, number, number, number,
  ];
  const fraction = match[7] ?? '';
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
  date.setUTCFullYear(year); // Date.UTC maps years 0–99 onto 1900–1999
  const same =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  if (!same) return fail();
  return date.getTime();
}

function parseCount(name: string, line: number, column: 2 | 3, text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new UsageError(
      `${name} line ${line}, column ${column} (${TRACE_COLUMNS[column - 1]}): expected a non-negative integer, ` +
        `got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

function describeParseFailure(name: string, path: string, error: unknown): Error {
  const failure = error as { code?: string; lines?: number; message?: string };
  if (typeof failure.code === 'string' && failure.code.startsWith('CSV_')) {
    const where = typeof failure.lines === 'number' ? ` line ${failure.lines}` : '';
    return new UsageError(`${name}${where}: malformed CSV (${failure.message ?? failure.code})`);
  }
  if (typeof failure.code === 'string') {
    return new UsageError(`cannot read trace ${path} (${failure.code}); pass the path of a CSV trace file`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openTrace, type TraceRow } from '../../src/cli/replay/trace-reader.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { HEADER, temporaryDirectory, writeTrace } from './cli-helpers.js';

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = temporaryDirectory();
});
afterEach(() => dir.remove());

async function readAll(path: string): Promise<TraceRow[]> {
  const rows: TraceRow[] = [];
  for await (const row of (await openTrace(path)).rows) rows.push(row);
  return rows;
}

async function failure(path: string): Promise<UsageError> {
  const error = await readAll(path).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UsageError);
  return error as UsageError;
}

describe('trace reader', () => {
  it('reads CRLF rows without a final line break, timestamps as UTC milliseconds', async () => {
    const path = writeTrace(dir.path, 't.csv', [
      HEADER,
      '2023-11-16 18:15:46.6805900,374,44',
      '2023-11-16 18:15:50.9951690,396,109',
    ]);
    const rows = await readAll(path);
    expect(rows.map(({ line, arrivalMs, contextTokens, generatedTokens }) => ({ line, arrivalMs, contextTokens, generatedTokens }))).toEqual([
      { line: 2, arrivalMs: Date.UTC(2023, 10, 16, 18, 15, 46, 680), contextTokens: 374, generatedTokens: 44 },
      { line: 3, arrivalMs: Date.UTC(2023, 10, 16, 18, 15, 50, 995), contextTokens: 396, generatedTokens: 109 },
    ]);
  });

  it('reads LF rows with a final line break and whole-second timestamps', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:46,1,2', ''], '\n');
    const rows = await readAll(path);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.arrivalMs).toBe(Date.UTC(2023, 10, 16, 18, 15, 46));
  });

  it('tolerates one blank line at the very end', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:46.1,1,2', '', ''], '\r\n');
    expect(await readAll(path)).toHaveLength(1);
  });

  it('refuses a blank line inside the trace, naming its line', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:46.1,1,2', '', '2023-11-16 18:15:47.1,1,2']);
    expect((await failure(path)).message).toMatch(/t\.csv line 3: blank line/);
  });

  it('refuses a wrong header', async () => {
    const path = writeTrace(dir.path, 't.csv', ['TIMESTAMP,Context,Generated', '2023-11-16 18:15:46.1,1,2']);
    expect((await failure(path)).message).toMatch(/t\.csv line 1: the header must be TIMESTAMP,ContextTokens,GeneratedTokens/);
  });

  it('refuses an empty file', async () => {
    const path = writeTrace(dir.path, 't.csv', []);
    expect((await failure(path)).message).toMatch(/line 1: the file is empty/);
  });

  it('refuses a row with the wrong number of fields, naming the line', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:46.1,1,2', '2023-11-16 18:15:47.1,1']);
    expect((await failure(path)).message).toBe(
      't.csv line 3: expected 3 fields (TIMESTAMP,ContextTokens,GeneratedTokens), got 2',
    );
  });

  it('refuses a malformed timestamp, naming line and column', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16T18:15:46.1,1,2']);
    expect((await failure(path)).message).toMatch(/^t\.csv line 2, column 1 \(TIMESTAMP\): expected YYYY-MM-DD HH:MM:SS\.fffffff/);
  });

  it('refuses an impossible date rather than rolling it over', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-02-30 10:00:00.0,1,2']);
    expect((await failure(path)).message).toMatch(/line 2, column 1 \(TIMESTAMP\)/);
  });

  it('refuses a token count that is not a non-negative integer, naming line and column', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:46.1,1,2', '2023-11-16 18:15:47.1,12,-3']);
    expect((await failure(path)).message).toBe(
      't.csv line 3, column 3 (GeneratedTokens): expected a non-negative integer, got "-3"',
    );
    const context = writeTrace(dir.path, 'c.csv', [HEADER, '2023-11-16 18:15:46.1,1.5,2']);
    expect((await failure(context)).message).toMatch(/c\.csv line 2, column 2 \(ContextTokens\)/);
  });

  it('refuses a timestamp earlier than the row before', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:47.1,1,2', '2023-11-16 18:15:46.1,1,2']);
    expect((await failure(path)).message).toMatch(/line 3, column 1 \(TIMESTAMP\): .* is earlier than line 2/);
  });

  it('refuses an unclosed quote with the line csv-parse reports', async () => {
    const path = writeTrace(dir.path, 't.csv', [HEADER, '2023-11-16 18:15:47.1,"1,2']);
    expect((await failure(path)).message).toMatch(/t\.csv line \d+: malformed CSV/);
  });

  it('refuses a path that is not a readable file', async () => {
    await expect(openTrace(`${dir.path}/missing.csv`)).rejects.toThrow(/cannot read trace .*missing\.csv \(ENOENT\)/);
    await expect(openTrace(dir.path)).rejects.toBeInstanceOf(UsageError);
  });
});

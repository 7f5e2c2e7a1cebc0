import { describe, expect, it } from 'vitest';

import { QuotaError } from '../core/errors.js';
import {
  decodePrunedRow,
  MAX_PRUNE_BATCH,
  prunedRunError,
  requirePrunableRunsRequest,
  requirePruneRateRequest,
  requirePruneRunsRequest,
  runPruneDetail,
} from './retention.js';

// The backend-neutral half of retention: the argument checks of the three prune
// operations, the tombstone decoder, and the CONFLICT a pruned run id is refused with.

const OPS = { actor: 'ops-alice', basis: 'asserted' as const };
const CUT_OFF_MS = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z
const AT_MS = CUT_OFF_MS + 90 * 86_400_000; // 2026-04-01T00:00:00.000Z

function refusal(action: () => unknown): QuotaError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    return error as QuotaError;
  }
  throw new Error('expected INVALID_ARGUMENT, but the request was accepted');
}

/** The code, the field named and the whole message of an argument refusal. */
function refused(action: () => unknown): [string, unknown, string] {
  const error = refusal(action);
  return [error.code, error.details.field, error.message];
}

describe('prunableRuns: the request', () => {
  const valid = { status: 'concluded', closedAtOrBeforeMs: CUT_OFF_MS, scanLimit: 50 };

  it('answers the request it was given, with no cursor when after is absent or null', () => {
    expect(requirePrunableRunsRequest(valid)).toEqual({ status: 'concluded', closedAtOrBeforeMs: CUT_OFF_MS, after: undefined, scanLimit: 50 });
    expect(requirePrunableRunsRequest({ ...valid, status: 'released', after: null }).after).toBeUndefined();
    expect(requirePrunableRunsRequest({ ...valid, after: 'run-0042' }).after).toBe('run-0042');
  });

  it('status is concluded or released, nothing else and nothing but a string', () => {
    expect(requirePrunableRunsRequest({ ...valid, status: 'released' }).status).toBe('released');
    expect(refused(() => requirePrunableRunsRequest({ ...valid, status: 'running' }))).toEqual([
      'INVALID_ARGUMENT',
      'status',
      `status: must be 'concluded' or 'released', got "running"`,
    ]);
    expect(refused(() => requirePrunableRunsRequest({ ...valid, status: 7 }))).toEqual([
      'INVALID_ARGUMENT',
      'status',
      `status: must be 'concluded' or 'released', got 7`,
    ]);
    expect(refused(() => requirePrunableRunsRequest({ ...valid, status: undefined }))[1]).toBe('status');
  });

  it('the request is an object; the cut-off is an instant; the cursor is an identifier', () => {
    expect(refused(() => requirePrunableRunsRequest(null))).toEqual(['INVALID_ARGUMENT', 'request', 'request: must be an object, got null']);
    expect(refused(() => requirePrunableRunsRequest({ ...valid, closedAtOrBeforeMs: -1 }))[1]).toBe('closedAtOrBeforeMs');
    expect(refused(() => requirePrunableRunsRequest({ ...valid, after: '' }))[1]).toBe('after');
    expect(refused(() => requirePrunableRunsRequest({ ...valid, after: 12 }))[1]).toBe('after');
  });

  it(`scanLimit is 1 … ${MAX_PRUNE_BATCH}: both bounds are accepted, one past either is refused naming it`, () => {
    expect(MAX_PRUNE_BATCH).toBe(1000);
    expect(requirePrunableRunsRequest({ ...valid, scanLimit: 1 }).scanLimit).toBe(1);
    expect(requirePrunableRunsRequest({ ...valid, scanLimit: 1000 }).scanLimit).toBe(1000);
    expect(refused(() => requirePrunableRunsRequest({ ...valid, scanLimit: 1001 }))).toEqual([
      'INVALID_ARGUMENT',
      'scanLimit',
      'scanLimit: must be at most 1000, got 1001',
    ]);
    expect(refused(() => requirePrunableRunsRequest({ ...valid, scanLimit: 0 }))[1]).toBe('scanLimit');
  });
});

describe('pruneRuns: the request', () => {
  const valid = { runs: ['r1'], closedAtOrBeforeMs: CUT_OFF_MS, atMs: AT_MS, by: OPS };

  it('answers the validated request', () => {
    expect(requirePruneRunsRequest(valid)).toEqual({ runs: ['r1'], closedAtOrBeforeMs: CUT_OFF_MS, atMs: AT_MS, by: OPS });
  });

  it('run ids are normalised (a bare ULID gains run_), deduplicated, and ordered by UTF-8 bytes as the stores order them', () => {
    const ulid = '01HZZZZZZZZZZZZZZZZZZZZZZZ';
    // UTF-16 order would put U+1F600 (a surrogate pair, 0xD83D…) before U+FF61; UTF-8 bytes put
    // U+FF61 (EF BD A1) first. Case sorts by byte too: 'B' (0x42) before 'a' (0x61).
    const runs = ['b', '\u{1F600}', 'a', '\uFF61', 'B', 'a', ulid, `run_${ulid}`];
    expect(requirePruneRunsRequest({ ...valid, runs }).runs).toEqual([`B`, 'a', 'b', `run_${ulid}`, '\uFF61', '\u{1F600}']);
  });

  it(`runs is an array of at most ${MAX_PRUNE_BATCH} ids: ${MAX_PRUNE_BATCH} pass, one more is refused, and a bad id is named by its index`, () => {
    const full = Array.from({ length: 1000 }, (_, index) => `r${String(index).padStart(4, '0')}`);
    expect(requirePruneRunsRequest({ ...valid, runs: full }).runs).toHaveLength(1000);
    expect(refused(() => requirePruneRunsRequest({ ...valid, runs: [...full, 'r1000'] }))).toEqual([
      'INVALID_ARGUMENT',
      'runs',
      'runs: must be an array of at most 1000 run ids, got an array of 1001',
    ]);
    expect(refused(() => requirePruneRunsRequest({ ...valid, runs: 'r1' }))).toEqual([
      'INVALID_ARGUMENT',
      'runs',
      'runs: must be an array of at most 1000 run ids, got "r1"',
    ]);
    expect(requirePruneRunsRequest({ ...valid, runs: [] }).runs).toEqual([]);
    expect(refused(() => requirePruneRunsRequest({ ...valid, runs: ['r1', ' r2'] }))[1]).toBe('runs[1]');
  });

  it('the cut-off and the instant are instants, by is an operator, the request an object', () => {
    expect(refused(() => requirePruneRunsRequest({ ...valid, closedAtOrBeforeMs: 1.5 }))[1]).toBe('closedAtOrBeforeMs');
    expect(refused(() => requirePruneRunsRequest({ ...valid, atMs: -1 }))[1]).toBe('atMs');
    expect(refused(() => requirePruneRunsRequest({ ...valid, by: { actor: '' } }))[1]).toBe('by.actor');
    expect(refused(() => requirePruneRunsRequest([]))[1]).toBe('request');
  });
});

describe('pruneRate: the request', () => {
  const valid = { atOrBeforeMs: CUT_OFF_MS, limit: 1000, atMs: AT_MS, by: OPS };

  it('answers the validated request; limit is 1 … 1000; every field is named when wrong', () => {
    expect(requirePruneRateRequest(valid)).toEqual({ atOrBeforeMs: CUT_OFF_MS, limit: 1000, atMs: AT_MS, by: OPS });
    expect(refused(() => requirePruneRateRequest({ ...valid, limit: 1001 }))).toEqual([
      'INVALID_ARGUMENT',
      'limit',
      'limit: must be at most 1000, got 1001',
    ]);
    expect(refused(() => requirePruneRateRequest({ ...valid, limit: 0 }))[1]).toBe('limit');
    expect(refused(() => requirePruneRateRequest({ ...valid, atOrBeforeMs: -1 }))[1]).toBe('atOrBeforeMs');
    expect(refused(() => requirePruneRateRequest({ ...valid, atMs: '1' }))[1]).toBe('atMs');
    expect(refused(() => requirePruneRateRequest({ ...valid, by: { actor: 'ops', basis: 'sworn' } }))[1]).toBe('by.basis');
    expect(refused(() => requirePruneRateRequest(undefined))[1]).toBe('request');
  });
});

describe('a pruned run: the tombstone and its refusal', () => {
  it('decodes a tombstone whose numbers come back as strings (PostgreSQL bigint) to numbers', () => {
    expect(
      decodePrunedRow('r1', { status: 'concluded', last_epoch: '3', closed_at_ms: String(CUT_OFF_MS), pruned_at_ms: String(AT_MS) }),
    ).toEqual({ run: 'r1', status: 'concluded', lastEpoch: 3, closedAtMs: CUT_OFF_MS, prunedAtMs: AT_MS });
  });

  it('a concluded run: CONFLICT saying when it concluded and was pruned, how many passes settled, and the verb refused', () => {
    const error = prunedRunError('acme', { run: 'r1', status: 'concluded', lastEpoch: 2, closedAtMs: CUT_OFF_MS, prunedAtMs: AT_MS }, 'settle');
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toBe(
      "run 'r1' of tenant 'acme' concluded at 2026-01-01T00:00:00.000Z and its records were pruned at 2026-04-01T00:00:00.000Z " +
        '(retention), so it cannot settle: a run is pruned only after every one of its passes has settled (it had 2), so what ' +
        'it spent is already booked and nothing is counted again; start a new run under a new id',
    );
    expect(error.details).toEqual({
      tenant: 'acme',
      run: 'r1',
      pruned: true,
      status: 'concluded',
      lastEpoch: 2,
      closedAtMs: CUT_OFF_MS,
      prunedAtMs: AT_MS,
    });
  });

  it('a released run: the refusal says it was released', () => {
    const error = prunedRunError('acme', { run: 'r2', status: 'released', lastEpoch: 1, closedAtMs: CUT_OFF_MS, prunedAtMs: AT_MS }, 'resume');
    expect(error.message).toMatch(/^run 'r2' of tenant 'acme' was released at 2026-01-01T00:00:00\.000Z .* so it cannot resume: .*\(it had 1\)/);
    expect(error.details.status).toBe('released');
  });

  it('the run.prune audit detail is the cut-off, the runs removed and their pass and receipt counts', () => {
    const request = { runs: ['r1', 'r2', 'r3'], closedAtOrBeforeMs: CUT_OFF_MS, atMs: AT_MS, by: OPS };
    const removed = { runs: ['r1', 'r3'], passes: 3, receipts: 2 };
    const detail = runPruneDetail(request, removed);
    expect(detail).toEqual({ closedAtOrBeforeMs: CUT_OFF_MS, runs: ['r1', 'r3'], passes: 3, receipts: 2 });
    expect(detail.runs).not.toBe(removed.runs);
  });
});

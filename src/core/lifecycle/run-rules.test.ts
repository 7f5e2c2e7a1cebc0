import { describe, expect, it } from 'vitest';

import { QuotaError } from '../errors.js';
import type { Halt } from '../halt-scope.js';
import { closedRunError, fencePass, isClosedStatus, statusAfterSettle, withheldBy, withheldScopeKey, type FenceInput } from './run-rules.js';
import { RUN_STATUSES } from './types.js';

// The backend-neutral pass rules on their own: what each refusal is,
// which details it carries, and what its message tells the caller to do.

const OPS = { actor: 'ops', basis: 'asserted' } as const;
const halt = (scope: Halt['scope'], reason = 'why'): Halt => ({ scope, reason, by: OPS, atMs: 1 });

function thrown(fn: () => unknown): QuotaError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    return error as QuotaError;
  }
  throw new Error('expected a QuotaError');
}

const live: FenceInput = {
  tenant: 'acme',
  run: 'run-a',
  epoch: 2,
  status: 'running',
  lastEpoch: 2,
  pass: { settledAtMs: null },
  verb: 'heartbeat',
};

describe('isClosedStatus', () => {
  it('only concluded and released runs are closed', () => {
    expect(RUN_STATUSES.filter(isClosedStatus)).toEqual(['concluded', 'released']);
  });
});

describe('closedRunError', () => {
  it('says whether an operator released the run or it concluded, and what to do', () => {
    const released = closedRunError('acme', 'run-a', 'released', 'resume');
    expect(released).toMatchObject({ code: 'CONFLICT', details: { tenant: 'acme', run: 'run-a', status: 'released' } });
    expect(released.message).toBe("run 'run-a' of tenant 'acme' was released by an operator, so it cannot resume; start a new run");
    const concluded = closedRunError('acme', 'run-b', 'concluded', 'dispatch');
    expect(concluded).toMatchObject({ code: 'CONFLICT', details: { tenant: 'acme', run: 'run-b', status: 'concluded' } });
    expect(concluded.message).toBe("run 'run-b' of tenant 'acme' has concluded, so it cannot dispatch; start a new run");
  });
});

describe('fencePass', () => {
  it('lets the latest live pass of an open run go on', () => {
    expect(() => fencePass(live)).not.toThrow();
    expect(() => fencePass({ ...live, status: 'paused' })).not.toThrow();
    expect(() => fencePass({ ...live, status: 'withheld' })).not.toThrow();
  });

  it('an unknown pass is NOT_FOUND, naming it and what to use instead', () => {
    const error = thrown(() => fencePass({ ...live, pass: undefined }));
    expect(error).toMatchObject({ code: 'NOT_FOUND', details: { tenant: 'acme', run: 'run-a', epoch: 2 } });
    expect(error.message).toBe("tenant 'acme' has no pass run-a/2 to heartbeat; use the epoch admit or resume answered");
  });

  it('a closed run is CONFLICT before anything else about the pass', () => {
    const error = thrown(() => fencePass({ ...live, status: 'released', epoch: 1, pass: { settledAtMs: 5 } }));
    expect(error).toMatchObject({ code: 'CONFLICT', details: { status: 'released' } });
  });

  it('a stale epoch is CONFLICT carrying the latest epoch, even when it equals one less', () => {
    const error = thrown(() => fencePass({ ...live, epoch: 1, lastEpoch: 2 }));
    expect(error).toMatchObject({ code: 'CONFLICT', details: { tenant: 'acme', run: 'run-a', epoch: 1, latestEpoch: 2 } });
    expect(error.message).toContain('pass run-a/1 is stale: a newer pass (epoch 2) of the run exists');
    expect(error.message).toContain('settle it with what it spent and leave the run to the newer pass');
  });

  it('a settled pass is CONFLICT, telling the caller to resume', () => {
    const error = thrown(() => fencePass({ ...live, pass: { settledAtMs: 0 }, verb: 'dispatch' }));
    expect(error).toMatchObject({ code: 'CONFLICT', details: { tenant: 'acme', run: 'run-a', epoch: 2, latestEpoch: 2 } });
    expect(error.message).toBe('pass run-a/2 has settled already, so it cannot dispatch; resume the run for a new pass');
  });

  it('a stranded run is CONFLICT, telling the caller to settle then resume', () => {
    const error = thrown(() => fencePass({ ...live, status: 'stranded' }));
    expect(error).toMatchObject({ code: 'CONFLICT', details: { tenant: 'acme', run: 'run-a', epoch: 2, latestEpoch: 2 } });
    expect(error.message).toBe(
      'pass run-a/2 lost its lease and the sweep stranded the run, so it cannot heartbeat; settle the pass with what it spent, then resume the run',
    );
  });
});

describe('withheldBy', () => {
  it('is null without a chain, with an empty chain, or without a subject halt on it', () => {
    const standing = [halt({ kind: 'subject', principal: 'user:alice' })];
    expect(withheldBy('acme', standing, {})).toBeNull();
    expect(withheldBy('acme', standing, { chain: [] })).toBeNull();
    expect(withheldBy('acme', standing, { chain: ['user:bob'] })).toBeNull();
  });

  it('tenant and agent halts do not withhold running work unless thrown to reach it', () => {
    const standing = [halt({ kind: 'tenant' }), halt({ kind: 'agent', name: 'clerk' })];
    expect(withheldBy('acme', standing, { agent: { name: 'clerk', digest: 'a'.repeat(64) }, chain: ['user:alice'] })).toBeNull();
  });

  it('C44 an agent halt that reaches running work withholds that agent, naming its scope and no subject', () => {
    const clerk = { name: 'clerk', digest: 'a'.repeat(64) };
    const standing = [halt({ kind: 'tenant' }, 'incident'), { ...halt({ kind: 'agent', name: 'clerk' }, 'bad prompt'), reachesRunning: true }];
    expect(withheldBy('acme', standing, { agent: clerk })).toEqual({ code: 'Withheld', tenant: 'acme', scope: 'agent:clerk', reason: 'bad prompt' });
    expect(withheldBy('acme', standing, { agent: { ...clerk, name: 'triage' } })).toBeNull();
    const refusal = withheldBy('acme', standing, { agent: clerk });
    expect(refusal === null ? null : withheldScopeKey(refusal)).toBe('agent:clerk');
  });

  it('names the subject and reason of the halt that withholds the run', () => {
    const standing = [halt({ kind: 'tenant' }, 'incident'), halt({ kind: 'subject', principal: 'svc:mail' }, 'key leaked')];
    const refusal = withheldBy('acme', standing, { chain: ['user:alice', 'svc:mail'] });
    expect(refusal).toEqual({ code: 'Withheld', tenant: 'acme', subject: 'svc:mail', scope: 'subject:svc:mail', reason: 'key leaked' });
    expect(refusal === null ? null : withheldScopeKey(refusal)).toBe('subject:svc:mail');
  });
});

describe('statusAfterSettle', () => {
  it('released stays released; concluding concludes; withheld stays withheld; the rest pause', () => {
    expect(statusAfterSettle('released', true)).toBe('released');
    expect(statusAfterSettle('released', false)).toBe('released');
    expect(statusAfterSettle('running', true)).toBe('concluded');
    expect(statusAfterSettle('withheld', true)).toBe('concluded');
    expect(statusAfterSettle('withheld', false)).toBe('withheld');
    expect(statusAfterSettle('running', false)).toBe('paused');
    expect(statusAfterSettle('stranded', false)).toBe('paused');
  });
});

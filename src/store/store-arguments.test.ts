import { describe, expect, it } from 'vitest';

import { QuotaError } from '../core/errors.js';
import {
  requireAdmitRequest,
  requireAgent,
  requireAuditEntry,
  MAX_CHAIN_LENGTH,
  requireChain,
  requireDispatchRequest,
  requireHeartbeatRequest,
  requireResumeRequest,
  requireSettlePassRequest,
} from './lifecycle-arguments.js';
import {
  requireAuditChainRequest,
  requireIdleHoldsRequest,
  requireLapsedRunsRequest,
  requireReleaseRunRequest,
  requireRunListRequest,
  requireRunStatus,
  requireSweepRunRequest,
  requireUnsettledPassesRequest,
} from './operator-arguments.js';
import {
  requireBoolean,
  requireEpoch,
  requireHalt,
  requirePlaneHalt,
  requireHaltScope,
  requireLimit,
  requireAgentNames,
  MAX_LEASE_MS,
  requireObject,
  requirePeriodKey,
  requireRateReservation,
  requireSettlement,
  requireSpendHold,
  requireWidth,
} from './store-arguments.js';
import { MAX_INSTANT_MS, requireInstantMs } from '../core/instant.js';
import { haltScopeKey } from '../core/halt-scope.js';
import { RUN_STATUSES } from './types.js';
import { invalidFieldOf as fieldOf } from '../../test/invalid-argument.js';

// The store's argument checks at the handle boundary, shared by both adapters: every bound, every
// integer check, and the field each refusal names.

const OPS = { actor: 'ops', basis: 'asserted' } as const;
const DIGEST = 'ab'.repeat(32);
const RUN = 'run_01JB0000000000000000000000';
const RUN_STATUSES_TEXT = RUN_STATUSES.map((status) => `'${status}'`).join(', ');

describe('scalars', () => {
  it('an instant is an integer from 0 to MAX_INSTANT_MS (the end of year 9999), the plane\'s own bound', () => {
    expect(requireInstantMs('atMs', 0)).toBe(0);
    expect(requireInstantMs('atMs', MAX_INSTANT_MS)).toBe(MAX_INSTANT_MS);
    for (const bad of [-1, 1.5, '1', MAX_INSTANT_MS + 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1]) {
      expect(fieldOf(() => requireInstantMs('atMs', bad))).toBe('atMs');
    }
  });

  it('a limit and an epoch are whole numbers of at least 1', () => {
    expect(requireLimit('limit', 1)).toBe(1);
    expect(requireEpoch('epoch', 1)).toBe(1);
    for (const bad of [0, 1.5, '2']) {
      expect(fieldOf(() => requireLimit('limit', bad))).toBe('limit');
      expect(fieldOf(() => requireEpoch('epoch', bad))).toBe('epoch');
    }
  });

  it('booleans, period keys, objects and widths', () => {
    expect(requireBoolean('b', false)).toBe(false);
    expect(fieldOf(() => requireBoolean('b', 0))).toBe('b');
    expect(requirePeriodKey('period', '2026-01')).toBe('2026-01');
    expect(requirePeriodKey('period', '2026-01-05')).toBe('2026-01-05');
    expect(fieldOf(() => requirePeriodKey('period', '2026-1'))).toBe('period');
    const object = { a: 1 };
    expect(requireObject('o', object)).toBe(object);
    for (const bad of [null, [], 'x']) expect(fieldOf(() => requireObject('o', bad))).toBe('o');
    expect(requireWidth('width', 0)).toBe(0);
    expect(fieldOf(() => requireWidth('width', 1.5))).toBe('width');
  });

  it('a spend hold is null when absent, else a period and an amount', () => {
    expect(requireSpendHold('hold', undefined)).toBeNull();
    expect(requireSpendHold('hold', null)).toBeNull();
    expect(requireSpendHold('hold', { period: '2026-01', amount: { tokens: 1, minorUnits: 2 } })).toEqual({
      period: '2026-01',
      amount: { tokens: 1, minorUnits: 2 },
    });
    expect(fieldOf(() => requireSpendHold('hold', { period: 'x', amount: { tokens: 1, minorUnits: 2 } }))).toBe('hold.period');
  });
});

describe('halts', () => {
  it('parses each scope kind, lowercasing a digest', () => {
    expect(requireHaltScope('scope', { kind: 'tenant' })).toEqual({ kind: 'tenant' });
    expect(requireHaltScope('scope', { kind: 'agent', name: 'clerk' })).toEqual({ kind: 'agent', name: 'clerk' });
    expect(requireHaltScope('scope', { kind: 'subject', principal: 'p' })).toEqual({ kind: 'subject', principal: 'p' });
    expect(requireHaltScope('scope', { kind: 'revision', digest: DIGEST.toUpperCase() })).toEqual({ kind: 'revision', digest: DIGEST });
    expect(haltScopeKey(requireHaltScope('scope', { kind: 'agent', name: 'clerk' }))).toBe('agent:clerk');
  });

  it('names the member of a bad scope', () => {
    expect(fieldOf(() => requireHaltScope('s', { kind: 'agent', name: '' }))).toBe('s.name');
    expect(fieldOf(() => requireHaltScope('s', { kind: 'subject', principal: 'x'.repeat(201) }))).toBe('s.principal');
    expect(fieldOf(() => requireHaltScope('s', { kind: 'revision', digest: `${DIGEST}0` }))).toBe('s.digest');
    expect(fieldOf(() => requireHaltScope('s', { kind: 'Tenant' }))).toBe('s.kind');
    expect(fieldOf(() => requireHaltScope('s', 'tenant'))).toBe('s');
  });

  it('a halt needs a string reason, a scope, an operator and an instant', () => {
    const halt = { scope: { kind: 'tenant' }, reason: '', by: OPS, atMs: 5 };
    expect(requireHalt('halt', halt)).toEqual(halt);
    expect(fieldOf(() => requireHalt('halt', { ...halt, reason: 5 }))).toBe('halt.reason');
    expect(fieldOf(() => requireHalt('halt', { ...halt, atMs: 1.5 }))).toBe('halt.atMs');
    expect(fieldOf(() => requireHalt('halt', { ...halt, by: { actor: '', basis: 'asserted' } }))).toBe('halt.by.actor');
  });

  it('C44 a halt may reach running work: true is kept, false is left out, anything else names reachesRunning', () => {
    const halt = { scope: { kind: 'agent', name: 'clerk' }, reason: 'loops', by: OPS, atMs: 5 };
    expect(requireHalt('halt', { ...halt, reachesRunning: true })).toEqual({ ...halt, reachesRunning: true });
    expect(requireHalt('halt', { ...halt, reachesRunning: false })).toEqual(halt);
    expect(fieldOf(() => requireHalt('halt', { ...halt, reachesRunning: 'yes' }))).toBe('halt.reachesRunning');
  });

  it('C49 the plane-wide halt has the scope plane, which no tenant halt may have', () => {
    const plane = { scope: { kind: 'plane' }, reason: 'outage', by: OPS, atMs: 5 };
    expect(requirePlaneHalt('halt', plane)).toEqual(plane);
    expect(requirePlaneHalt('halt', { ...plane, reachesRunning: true })).toEqual({ ...plane, reachesRunning: true });
    expect(fieldOf(() => requirePlaneHalt('halt', { ...plane, scope: { kind: 'tenant' } }))).toBe('halt.scope.kind');
    expect(fieldOf(() => requirePlaneHalt('halt', { ...plane, atMs: -1 }))).toBe('halt.atMs');
    expect(fieldOf(() => requireHaltScope('s', { kind: 'plane' }))).toBe('s.kind');
  });
});

describe('settlements and rate reservations', () => {
  const settlement = { run: RUN.slice(4), epoch: 1, period: '2026-01', spend: { tokens: 1, minorUnits: 0 }, releaseSlot: true, concludes: false };

  it('normalises the run id and keeps a null period', () => {
    expect(requireSettlement('s', settlement)).toEqual({ ...settlement, run: RUN });
    expect(requireSettlement('s', { ...settlement, period: null }).period).toBeNull();
    expect(requireSettlement('s', { ...settlement, period: undefined }).period).toBeNull();
  });

  it.each([
    ['s.epoch', { epoch: 1.5 }],
    ['s.period', { period: '2026' }],
    ['s.releaseSlot', { releaseSlot: 1 }],
    ['s.concludes', { concludes: 'no' }],
    ['s.spend.tokens', { spend: null }],
  ])('refuses %s', (field, change) => {
    expect(fieldOf(() => requireSettlement('s', { ...settlement, ...change }))).toBe(field);
  });

  it('a rate reservation keeps every ceiling window as given, even an uncountable one', () => {
    const reservation = { grant: 'tool://a/b', run: RUN, dispatch: 'k1', ceilings: [{ count: 1, windowSeconds: 0 }], atMs: 5, exempt: false };
    expect(requireRateReservation('r', reservation)).toEqual(reservation);
    expect(fieldOf(() => requireRateReservation('r', { ...reservation, dispatch: '' }))).toBe('r.dispatch');
    expect(fieldOf(() => requireRateReservation('r', { ...reservation, exempt: undefined }))).toBe('r.exempt');
    expect(fieldOf(() => requireRateReservation('r', { ...reservation, grant: ' ' }))).toBe('r.grant');
  });
});

describe('lifecycle requests', () => {
  it('an agent digest is 64 hex digits, answered lowercase; any other identifier is refused naming agent.digest', () => {
    expect(requireAgent('agent', { name: 'clerk', digest: DIGEST.toUpperCase() })).toEqual({ name: 'clerk', digest: DIGEST });
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: 'Build-7' }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: `${DIGEST}A` }))).toBe('agent.digest');
    expect(requireAgent('agent', null)).toBeUndefined();
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: '' }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: '', digest: DIGEST }))).toBe('agent.name');
  });

  it('a chain is an array of at most MAX_CHAIN_LENGTH principals', () => {
    expect(requireChain('chain', Array.from({ length: MAX_CHAIN_LENGTH }, (_, index) => `p${index}`))).toHaveLength(MAX_CHAIN_LENGTH);
    expect(fieldOf(() => requireChain('chain', Array.from({ length: MAX_CHAIN_LENGTH + 1 }, (_, index) => `p${index}`)))).toBe('chain');
    expect(requireChain('chain', undefined)).toBeUndefined();
    expect(requireChain('chain', null)).toBeUndefined();
    expect(requireChain('chain', ['a', 'b'])).toEqual(['a', 'b']);
    expect(fieldOf(() => requireChain('chain', 'a'))).toBe('chain');
    expect(fieldOf(() => requireChain('chain', ['a', '']))).toBe('chain[1]');
  });

  it('leases are whole milliseconds in admit, resume and heartbeat', () => {
    const admit = { run: RUN, budget: {}, width: 1, atMs: 5, leaseMs: 1000 };
    expect(requireAdmitRequest(admit)).toMatchObject({ run: RUN, leaseMs: 1000, quota: undefined, agent: undefined, chain: undefined });
    expect(requireAdmitRequest({ ...admit, quota: { maxConcurrentRuns: 2 } }).quota).toEqual({ period: 'monthly', maxConcurrentRuns: 2 });
    expect(requireAdmitRequest({ ...admit, quota: null }).quota).toBeUndefined();
    expect(fieldOf(() => requireAdmitRequest({ ...admit, leaseMs: 1.5 }))).toBe('leaseMs');
    expect(requireResumeRequest({ run: RUN, atMs: 5, leaseMs: 1000 })).toEqual({ run: RUN, atMs: 5, leaseMs: 1000 });
    expect(fieldOf(() => requireResumeRequest({ run: RUN, atMs: 5, leaseMs: 1.5 }))).toBe('leaseMs');
    // A lease is 1 ms to MAX_LEASE_MS (24 hours) at the port, as at the plane.
    expect(requireResumeRequest({ run: RUN, atMs: 5, leaseMs: MAX_LEASE_MS }).leaseMs).toBe(MAX_LEASE_MS);
    for (const bad of [0, MAX_LEASE_MS + 1]) {
      expect(fieldOf(() => requireAdmitRequest({ ...admit, leaseMs: bad }))).toBe('leaseMs');
      expect(fieldOf(() => requireResumeRequest({ run: RUN, atMs: 5, leaseMs: bad }))).toBe('leaseMs');
      expect(fieldOf(() => requireHeartbeatRequest({ run: RUN, epoch: 1, atMs: 5, leaseMs: bad }))).toBe('leaseMs');
    }
    expect(requireHeartbeatRequest({ run: RUN, epoch: 2, atMs: 5, leaseMs: 10 })).toEqual({ run: RUN, epoch: 2, atMs: 5, leaseMs: 10 });
    expect(fieldOf(() => requireHeartbeatRequest({ run: RUN, epoch: 1.5, atMs: 5, leaseMs: 10 }))).toBe('epoch');
  });

  it('a settle-pass request keeps an operator only when one is given', () => {
    const request = { run: RUN, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, atMs: 5 };
    expect(requireSettlePassRequest(request).by).toBeUndefined();
    expect(requireSettlePassRequest({ ...request, by: null }).by).toBeUndefined();
    expect(requireSettlePassRequest({ ...request, by: OPS }).by).toEqual(OPS);
    expect(fieldOf(() => requireSettlePassRequest({ ...request, by: { actor: '' } }))).toBe('by.actor');
  });

  it('a dispatch names its pass and lease together or not at all', () => {
    const dispatch = { run: RUN, grant: 'tool://a/b', dispatch: 'k', exempt: false, atMs: 5 };
    expect(requireDispatchRequest(dispatch)).toEqual({ ...dispatch, ceilings: [] });
    expect(requireDispatchRequest({ ...dispatch, epoch: null, leaseMs: null })).toEqual({ ...dispatch, ceilings: [] });
    expect(requireDispatchRequest({ ...dispatch, epoch: 2, leaseMs: 100 })).toEqual({ ...dispatch, ceilings: [], epoch: 2, leaseMs: 100 });
    expect(fieldOf(() => requireDispatchRequest({ ...dispatch, leaseMs: 100 }))).toBe('leaseMs');
    expect(fieldOf(() => requireDispatchRequest({ ...dispatch, epoch: 2 }))).toBe('leaseMs');
    expect(fieldOf(() => requireDispatchRequest({ ...dispatch, epoch: 2, leaseMs: null }))).toBe('leaseMs');
    expect(fieldOf(() => requireDispatchRequest({ ...dispatch, epoch: 1.5, leaseMs: 100 }))).toBe('epoch');
    expect(fieldOf(() => requireDispatchRequest({ ...dispatch, epoch: 2, leaseMs: 1.5 }))).toBe('leaseMs');
  });

  it('an audit entry needs a subject and JSON detail', () => {
    const entry = { atMs: 5, by: OPS, action: 'note', subject: 's', detail: { a: 1 } };
    expect(requireAuditEntry('entry', entry)).toEqual(entry);
    expect(requireAuditEntry('entry', { ...entry, detail: undefined }).detail).toEqual({});
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, subject: '' }))).toBe('entry.subject');
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, subject: 3 }))).toBe('entry.subject');
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, detail: { big: 1n } }))).toBe('entry.detail');
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, action: '' }))).toBe('entry.action');
  });
});

describe('operator requests', () => {
  it('run statuses and run listings', () => {
    expect(requireRunStatus('s', 'stranded')).toBe('stranded');
    expect(fieldOf(() => requireRunStatus('s', 'asleep'))).toBe('s');
    expect(requireRunListRequest({ limit: 5 })).toEqual({ statuses: undefined, after: undefined, limit: 5 });
    expect(requireRunListRequest({ limit: 5, statuses: null, after: null })).toEqual({ statuses: undefined, after: undefined, limit: 5 });
    expect(requireRunListRequest({ limit: 5, statuses: ['paused'], after: 'run-a' })).toEqual({ statuses: ['paused'], after: 'run-a', limit: 5 });
    expect(fieldOf(() => requireRunListRequest({ limit: 5, statuses: [] }))).toBe('statuses');
    expect(fieldOf(() => requireRunListRequest({ limit: 5, statuses: 'paused' }))).toBe('statuses');
    expect(fieldOf(() => requireRunListRequest({ limit: 5, statuses: ['paused', 'x'] }))).toBe('statuses[1]');
    expect(fieldOf(() => requireRunListRequest({ limit: 0 }))).toBe('limit');
  });

  it('sweep, listing and release requests', () => {
    expect(requireLapsedRunsRequest({ atMs: 5, limit: 2 })).toEqual({ atMs: 5, after: undefined, limit: 2 });
    expect(requireLapsedRunsRequest({ atMs: 5, limit: 2, after: 'run-a' }).after).toBe('run-a');
    expect(requireSweepRunRequest({ run: RUN.slice(4), atMs: 5 })).toEqual({ run: RUN, atMs: 5 });
    expect(requireUnsettledPassesRequest({ atMs: 5, limit: 2 })).toEqual({ atMs: 5, limit: 2 });
    expect(requireIdleHoldsRequest({ idleSinceMs: 5, limit: 2 })).toEqual({ idleSinceMs: 5, limit: 2 });
    expect(fieldOf(() => requireIdleHoldsRequest({ idleSinceMs: -5, limit: 2 }))).toBe('idleSinceMs');
    expect(requireReleaseRunRequest({ run: RUN, atMs: 5, by: OPS })).toEqual({ run: RUN, atMs: 5, by: OPS });
    expect(requireAuditChainRequest({ afterSeq: 0, limit: 1 })).toEqual({ afterSeq: 0, limit: 1 });
    expect(fieldOf(() => requireAuditChainRequest({ afterSeq: 1.5, limit: 1 }))).toBe('afterSeq');
  });
});

// Each request check names the member it refuses and says what it wanted, in full: the field a
// refusal names is part of the port's answer, so a check that named another member, or none,
// must fail here.
function refusal(fn: () => unknown): string {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(QuotaError);
  expect((caught as QuotaError).message.startsWith(`${String((caught as QuotaError).details.field)}: `)).toBe(true);
  return (caught as QuotaError).message;
}

describe('the member each request check names', () => {
  const admit = { run: RUN, budget: {}, width: 1, atMs: 5, leaseMs: 1000 };
  const settle = { run: RUN, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true, atMs: 5 };
  const heartbeat = { run: RUN, epoch: 2, atMs: 5, leaseMs: 10 };
  const dispatch = { run: RUN, grant: 'tool://a/b', dispatch: 'k', exempt: false, atMs: 5 };

  it.each([
    ['admit', requireAdmitRequest, admit],
    ['resume', requireResumeRequest, { run: RUN, atMs: 5, leaseMs: 1000 }],
    ['settle', requireSettlePassRequest, settle],
    ['heartbeat', requireHeartbeatRequest, heartbeat],
    ['dispatch', requireDispatchRequest, dispatch],
    ['runs', requireRunListRequest, { limit: 5 }],
    ['lapsedRuns', requireLapsedRunsRequest, { atMs: 5, limit: 2 }],
    ['sweepRun', requireSweepRunRequest, { run: RUN, atMs: 5 }],
    ['unsettledPasses', requireUnsettledPassesRequest, { atMs: 5, limit: 2 }],
    ['idleHolds', requireIdleHoldsRequest, { idleSinceMs: 5, limit: 2 }],
    ['releaseRun', requireReleaseRunRequest, { run: RUN, atMs: 5, by: OPS }],
    ['auditChain', requireAuditChainRequest, { afterSeq: 0, limit: 1 }],
  ] as const)('a %s request that is not an object is refused as the request, and each member by its name', (_name, check, good) => {
    for (const bad of [null, 'x', [good]]) expect(fieldOf(() => check(bad as never))).toBe('request');
    // Every member the request has, made bad in turn, is refused under its own name.
    const badValue: Record<string, unknown> = {
      run: '', epoch: 0, atMs: -1, leaseMs: -1, width: -1, budget: 5, spend: null, concludes: 'yes', grant: '', dispatch: '',
      exempt: 1, limit: 0, idleSinceMs: -1, afterSeq: -1, by: 5,
    };
    for (const member of Object.keys(good)) {
      const field = fieldOf(() => check({ ...good, [member]: badValue[member] } as never));
      expect(field === member || field.startsWith(`${member}.`)).toBe(true);
    }
  });

  it('optional members are refused by their own names', () => {
    expect(fieldOf(() => requireAdmitRequest({ ...admit, agent: 5 }))).toBe('agent');
    expect(fieldOf(() => requireAdmitRequest({ ...admit, chain: 'root' }))).toBe('chain');
    expect(fieldOf(() => requireAdmitRequest({ ...admit, quota: { maxConcurrentRuns: -1 } }))).toBe('quota.maxConcurrentRuns');
    expect(fieldOf(() => requireDispatchRequest({ ...dispatch, ceilings: 5 }))).toBe('ceilings');
    expect(fieldOf(() => requireLapsedRunsRequest({ atMs: 5, limit: 2, after: '' }))).toBe('after');
    expect(fieldOf(() => requireRunListRequest({ limit: 5, after: '' }))).toBe('after');
    expect(fieldOf(() => requireSettlePassRequest({ ...settle, by: 5 }))).toBe('by');
  });

  it('refusals say what was wanted and what was given', () => {
    expect(refusal(() => requireChain('chain', 'root'))).toBe('chain: must be an array of principal ids, root person first, got "root"');
    expect(refusal(() => requireDispatchRequest({ ...dispatch, leaseMs: 100 }))).toBe(
      'leaseMs: renews the lease of the pass named by epoch; give epoch too, or drop leaseMs',
    );
    for (const leaseMs of [undefined, null]) {
      expect(refusal(() => requireDispatchRequest({ ...dispatch, epoch: 2, leaseMs }))).toBe(
        "leaseMs: is required with epoch: the dispatch renews that pass's lease by leaseMs milliseconds",
      );
    }
    expect(refusal(() => requireRunStatus('s', 'asleep'))).toBe(
      `s: must be one of ${RUN_STATUSES_TEXT}, got "asleep"`,
    );
    expect(refusal(() => requireRunListRequest({ limit: 5, statuses: [] }))).toBe('statuses: must be a non-empty array of run statuses, got an array of 0');
    expect(refusal(() => requireInstantMs('atMs', 1.5))).toBe('atMs: must be an integer Unix instant in milliseconds between 0 and 253402300799999, got 1.5');
    expect(refusal(() => requireLimit('limit', 0))).toBe('limit: must be an integer of at least 1, got 0');
    expect(refusal(() => requireEpoch('epoch', 0))).toBe('epoch: must be a pass epoch, a positive integer (the epoch admit or resume answered), got 0');
    expect(refusal(() => requireBoolean('b', 0))).toBe('b: must be true or false, got 0');
    expect(refusal(() => requirePeriodKey('period', '2026-1'))).toBe('period: must be a billing period key YYYY-MM or YYYY-MM-DD, got "2026-1"');
    expect(refusal(() => requireObject('o', []))).toBe('o: must be an object, got an array of 0');
    expect(refusal(() => requireHaltScope('s', { kind: 'revision', digest: 'abc' }))).toBe('s.digest: must be 64 hex digits, got "abc"');
    expect(refusal(() => requireHaltScope('s', { kind: 'revision', digest: 5 }))).toBe('s.digest: must be 64 hex digits, got 5');
    expect(refusal(() => requireHaltScope('s', { kind: 'tenants' }))).toBe(
      "s.kind: must be 'tenant', 'agent', 'revision' or 'subject', got \"tenants\"",
    );
    expect(refusal(() => requireHalt('halt', { scope: { kind: 'tenant' }, reason: 5, by: OPS, atMs: 5 }))).toBe('halt.reason: must be a string, got 5');
  });

  it('an audit entry names its members under the given prefix and says what it wanted', () => {
    const entry = { atMs: 5, by: OPS, action: 'note', subject: 's', detail: { a: 1 } };
    expect(refusal(() => requireAuditEntry('entry', { ...entry, subject: '' }))).toBe('entry.subject: must be a non-empty string, got ""');
    expect(refusal(() => requireAuditEntry('entry', { ...entry, detail: { big: 1n } }))).toBe(
      'entry.detail: must be JSON-serialisable data (no cycles, no bigint)',
    );
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, detail: 'x' }))).toBe('entry.detail');
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, atMs: -1 }))).toBe('entry.atMs');
    expect(fieldOf(() => requireAuditEntry('entry', { ...entry, by: 5 }))).toBe('entry.by');
    expect(fieldOf(() => requireAuditEntry('entry', 5))).toBe('entry');
  });

  it('settlements and rate reservations name their members under the given prefix', () => {
    const reservation = { grant: 'tool://a/b', run: RUN, dispatch: 'k1', ceilings: [], atMs: 5, exempt: false };
    expect(fieldOf(() => requireRateReservation('r', { ...reservation, run: '' }))).toBe('r.run');
    expect(fieldOf(() => requireRateReservation('r', { ...reservation, ceilings: 5 }))).toBe('r.ceilings');
    expect(fieldOf(() => requireRateReservation('r', { ...reservation, atMs: -1 }))).toBe('r.atMs');
    const settlement = { run: RUN, epoch: 1, period: null, spend: { tokens: 1, minorUnits: 0 }, releaseSlot: true, concludes: false };
    expect(fieldOf(() => requireSettlement('s', { ...settlement, run: '' }))).toBe('s.run');
  });
});

describe('agent name lists (usage per agent, plane-wide agent counts)', () => {
  it('are deduplicated in first-seen order, each element checked as an identifier and named by its index', () => {
    expect(requireAgentNames('agents', ['triage', 'refund-bot', 'triage'])).toEqual(['triage', 'refund-bot']);
    expect(requireAgentNames('agents', [])).toEqual([]);
    expect(fieldOf(() => requireAgentNames('agents', ['triage', ' refund-bot']))).toBe('agents[1]');
    expect(fieldOf(() => requireAgentNames('agents', ['triage', 7]))).toBe('agents[1]');
  });

  it('anything but an array is refused naming the list, and the message says what was expected and what came', () => {
    for (const value of ['triage', { 0: 'triage', length: 1 }, null, undefined]) {
      expect(fieldOf(() => requireAgentNames('agents', value))).toBe('agents');
    }
    expect(() => requireAgentNames('agents', 'triage')).toThrow(/^agents: must be an array of agent names, got /);
  });
});

import { describe, expect, it } from 'vitest';

import { MAX_AMOUNT } from '../core/amounts.js';
import { QuotaError } from '../core/errors.js';
import { decodeHaltRow, sameHalt } from './halt-rows.js';
import { corrupt, decodeAmount, decodeAudit, decodeChain, decodeRun, decodeRunId, decodeSpend, type AuditRow, type RunRow } from './rows.js';

// Reading stored rows back: a row that cannot be read is STORE_CORRUPT, never
// skipped and never guessed at; every field that makes a row readable is checked.

function corruptOf(fn: () => unknown): QuotaError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    expect((error as QuotaError).code).toBe('STORE_CORRUPT');
    return error as QuotaError;
  }
  throw new Error('expected STORE_CORRUPT');
}

const RUN_ROW: RunRow = {
  run_id: 'run-a',
  status: 'running',
  agent_name: 'clerk',
  agent_digest: 'ab'.repeat(32),
  chain_json: '["user:alice"]',
  admitted_at_ms: 5,
  last_epoch: 2,
} as RunRow;

const AUDIT_ROW: AuditRow = {
  seq: 3,
  at_ms: 7,
  actor: 'ops',
  basis: 'authenticated',
  action: 'halt',
  subject: 'tenant',
  detail_json: '{"reason":"x"}',
  hash: 'f'.repeat(64),
};

describe('corrupt', () => {
  it('names the tenant and what could not be read, keeping extra details', () => {
    const error = corrupt('acme', 'a broken row', { seq: 4 });
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', details: { tenant: 'acme', seq: 4 } });
    expect(error.message).toBe("tenant 'acme' has a broken row; the store refuses rather than act on a row it cannot read");
  });
});

describe('amounts and run ids', () => {
  it('accepts 0 … MAX_AMOUNT integers, and nothing else', () => {
    expect(decodeAmount('acme', 'x', 0)).toBe(0);
    expect(decodeAmount('acme', 'x', MAX_AMOUNT)).toBe(MAX_AMOUNT);
    for (const bad of [-1, 1.5, MAX_AMOUNT + 2, '5', null, Number.NaN]) {
      expect(corruptOf(() => decodeAmount('acme', 'the hold', bad)).message).toContain('an unreadable amount in the hold');
    }
  });

  it('reads absent spend columns as 0', () => {
    expect(decodeSpend('acme', 'x', undefined, null)).toEqual({ tokens: 0, minorUnits: 0 });
    expect(decodeSpend('acme', 'x', 3, 4)).toEqual({ tokens: 3, minorUnits: 4 });
    corruptOf(() => decodeSpend('acme', 'x', 3, -4));
  });

  it('a run id must be an identifier, and the error names the table', () => {
    expect(decodeRunId('acme', 'slot', 'run-a')).toBe('run-a');
    const error = corruptOf(() => decodeRunId('acme', 'slot', ''));
    expect(error.details).toEqual({ tenant: 'acme', table: 'slot' });
    expect(error.message).toContain('a bad run id "" in the quota slot table');
  });
});

describe('runs', () => {
  it('decodes a run with its agent and chain', () => {
    expect(decodeRun('acme', RUN_ROW)).toEqual({
      run: 'run-a',
      status: 'running',
      agent: { name: 'clerk', digest: 'ab'.repeat(32) },
      chain: ['user:alice'],
      admittedAtMs: 5,
      lastEpoch: 2,
    });
  });

  it('has no agent unless both name and digest are stored, and no chain when none is', () => {
    expect(decodeRun('acme', { ...RUN_ROW, agent_name: null }).agent).toBeNull();
    expect(decodeRun('acme', { ...RUN_ROW, agent_digest: null }).agent).toBeNull();
    expect(decodeRun('acme', { ...RUN_ROW, chain_json: null }).chain).toBeNull();
  });

  it('an unknown status or an unreadable chain is corrupt', () => {
    expect(corruptOf(() => decodeRun('acme', { ...RUN_ROW, status: 'asleep' })).message).toContain(`run 'run-a' with the unknown status "asleep"`);
    for (const chain of ['not json', '{"a":1}', '["a",1]', 'null']) {
      expect(corruptOf(() => decodeChain('acme', 'run-a', chain)).message).toContain("run 'run-a' with an unreadable delegation chain");
    }
    expect(decodeChain('acme', 'run-a', '[]')).toEqual([]);
  });
});

describe('audit rows', () => {
  it('decodes a row', () => {
    expect(decodeAudit('acme', AUDIT_ROW)).toEqual({
      seq: 3,
      atMs: 7,
      by: { actor: 'ops', basis: 'authenticated' },
      action: 'halt',
      subject: 'tenant',
      detail: { reason: 'x' },
      hash: 'f'.repeat(64),
    });
    expect(decodeAudit('acme', { ...AUDIT_ROW, basis: 'asserted' }).by.basis).toBe('asserted');
  });

  it.each([
    { detail_json: 'not json' },
    { detail_json: 'null' },
    { detail_json: '[1]' },
    { detail_json: '"text"' },
    { basis: 'sworn' },
  ])('a row with %j cannot be read, and says which', (change) => {
    const error = corruptOf(() => decodeAudit('acme', { ...AUDIT_ROW, ...change }));
    expect(error.details).toEqual({ tenant: 'acme', seq: 3 });
    expect(error.message).toContain('audit row 3 that cannot be read');
  });
});

describe('halt rows', () => {
  const row = { scope: 'agent:clerk', reason: 'looping', by_actor: 'ops', by_basis: 'asserted', at_ms: '12' };

  it('decodes a row, reading the instant from text or bigint', () => {
    expect(decodeHaltRow('acme', row)).toEqual({ scope: { kind: 'agent', name: 'clerk' }, reason: 'looping', by: { actor: 'ops', basis: 'asserted' }, atMs: 12 });
    expect(decodeHaltRow('acme', { ...row, at_ms: 13n, by_basis: 'authenticated' })).toMatchObject({ atMs: 13, by: { basis: 'authenticated' } });
  });

  it('an unreadable scope, basis or instant is corrupt, naming the scope', () => {
    const scope = corruptOf(() => decodeHaltRow('acme', { ...row, scope: 'agent:' }));
    expect(scope.details).toEqual({ tenant: 'acme', scope: 'agent:' });
    expect(scope.message).toBe(
      `tenant 'acme' has a halt with the unreadable scope "agent:"; the store refuses rather than admit work an operator may have stopped`,
    );
    for (const bad of [{ by_basis: 'sworn' }, { at_ms: 'soon' }, { at_ms: 1.5 }]) {
      const error = corruptOf(() => decodeHaltRow('acme', { ...row, ...bad }));
      expect(error.details).toEqual({ tenant: 'acme', scope: 'agent:clerk' });
      expect(error.message).toContain('whose operator or instant cannot be read');
    }
  });

  it('sameHalt compares reason, operator and instant', () => {
    const a = decodeHaltRow('acme', row);
    expect(sameHalt(a, { ...a })).toBe(true);
    expect(sameHalt(a, { ...a, reason: 'other' })).toBe(false);
    expect(sameHalt(a, { ...a, by: { actor: 'other', basis: 'asserted' } })).toBe(false);
    expect(sameHalt(a, { ...a, by: { actor: 'ops', basis: 'authenticated' } })).toBe(false);
    expect(sameHalt(a, { ...a, atMs: 13 })).toBe(false);
  });
});

describe('what a corrupt row error names', () => {
  it('a run row with a bad run id names the run table', () => {
    const error = corruptOf(() => decodeRun('acme', { ...RUN_ROW, run_id: '' }));
    expect(error.details).toMatchObject({ table: 'run' });
    expect(error.message).toContain('in the quota run table');
  });
});

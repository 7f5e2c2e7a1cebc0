import { describe, expect, it } from 'vitest';

import { attentionItems, mergedRemedy } from './attention-items.js';
import type { AttentionCondition, AttentionKind } from './operator-types.js';

const remedy = (text: string, ...cli: string[]) => ({ text, cli, http: cli.map((line) => `POST ${line}`) });

function condition(kind: AttentionKind, tenant: string, run: string, epoch: number | null, sinceMs: number, cli: string[]): AttentionCondition {
  return { kind, tenant, run, epoch, halt: null, sinceMs, ageMs: 1000 - sinceMs, summary: `${kind} ${run}`, remedy: remedy(`do ${kind}`, ...cli) };
}

describe('attention items: one per run with every reason', () => {
  it('gathers one run’s conditions, keeps other runs and tenants apart, in first-seen order', () => {
    const items = attentionItems([
      condition('run.stranded', 'acme', 'r1', 3, 400, ['settle r1 3', 'release r1']),
      condition('run.stranded', 'beta', 'r1', 1, 500, ['settle r1 1']),
      condition('hold.stale', 'acme', 'r2', null, 100, ['release r2']),
      condition('pass.unsettled', 'acme', 'r1', 2, 300, ['settle r1 2']),
      condition('pass.unsettled', 'acme', 'r1', 3, 400, ['settle r1 3']),
    ]);
    expect(items.map((item) => [item.tenant, item.run, item.reasons, item.epochs, item.sinceMs, item.ageMs])).toEqual([
      ['acme', 'r1', ['run.stranded', 'pass.unsettled'], [2, 3], 300, 700],
      ['beta', 'r1', ['run.stranded'], [1], 500, 500],
      ['acme', 'r2', ['hold.stale'], [], 100, 900],
    ]);
    expect(items[0]?.summaries).toEqual(['run.stranded r1', 'pass.unsettled r1', 'pass.unsettled r1']);
    // Pass 2's settle is a command pass 3's remedies do not give, so its sentence is kept.
    expect(items[0]?.remedy).toEqual({
      text: 'do run.stranded; then do pass.unsettled',
      cli: ['settle r1 3', 'release r1', 'settle r1 2'],
      http: ['POST settle r1 3', 'POST release r1', 'POST settle r1 2'],
    });
  });

  it('keeps a spend.overrun apart from the run it names', () => {
    const items = attentionItems([
      condition('run.overran', 'acme', 'r1', 1, 10, ['status']),
      condition('spend.overrun', 'acme', 'r1', null, 20, ['status']),
    ]);
    expect(items.map((item) => item.reasons)).toEqual([['run.overran'], ['spend.overrun']]);
  });

  it('names the withheld halt of a run', () => {
    const withheld = { ...condition('run.withheld', 'acme', 'r1', null, 5, ['lift subject:x']), halt: 'subject:x' };
    expect(attentionItems([condition('hold.stale', 'acme', 'r1', null, 1, ['release r1']), withheld])[0]?.halt).toBe('subject:x');
  });

  it('merges remedies: a sentence whose commands are all given already is dropped, each line once', () => {
    expect(mergedRemedy([remedy('a', 'x', 'y'), remedy('b', 'y'), remedy('c', 'z')])).toEqual({
      text: 'a; then c',
      cli: ['x', 'y', 'z'],
      http: ['POST x', 'POST y', 'POST z'],
    });
    // A remedy with no CLI line (an HTTP-only one) keeps its sentence.
    expect(mergedRemedy([remedy('a', 'x'), { text: 'b', cli: [], http: ['GET b'] }]).text).toBe('a; then b');
  });
});

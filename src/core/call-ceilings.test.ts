import { describe, expect, it } from 'vitest';

import { describeCallCeiling, parseCallCeilings } from './call-ceilings.js';
import { callSubjects, coveringCeilings, subjectCeilings } from './call-coverage.js';
import { callPruneFloorMs, isCallPruneDue, emptyCallMeter, recordedCallInstantMs } from './call-meter.js';
import { callRefusalMessage } from './call-refusal.js';

function fieldOf(thunk: () => unknown): unknown {
  try {
    thunk();
  } catch (error) {
    return (error as { details?: { field?: unknown } }).details?.field;
  }
  return undefined;
}

describe('model-call ceilings as configured (docs/design/rules.md#m1)', () => {
  it('M1: reads every member and freezes the result', () => {
    const parsed = parseCallCeilings({
      tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }],
      agents: { writer: [{ unit: 'requests', limit: 10, windowSeconds: 1 }] },
      models: { 'gpt-4o': [{ unit: 'minorUnits', limit: 5000, period: 'daily' }] },
      groups: { frontier: { models: ['gpt-4o', 'o3'], ceilings: [{ unit: 'tokens', limit: 1, windowSeconds: 86_400 }] } },
      endUsers: { default: [{ unit: 'tokens', limit: 10, windowSeconds: 60 }], overrides: { vip: [] } },
      defaultMaxOutputTokens: 1024,
      leaseMs: 60_000,
    });
    expect(Object.isFrozen(parsed)).toBe(true);
    expect(parsed.groups?.frontier?.models).toEqual(['gpt-4o', 'o3']);
    expect(subjectCeilings(parsed, 'user:vip')).toEqual([]);
    expect(subjectCeilings(parsed, 'user:anyone')).toEqual([{ unit: 'tokens', limit: 10, windowSeconds: 60 }]);
    expect(callSubjects(parsed, { model: 'o3', agent: 'writer', endUser: 'ann' })).toEqual(['tenant', 'agent:writer', 'model:o3', 'group:frontier', 'user:ann']);
    expect(coveringCeilings(parsed, ['tenant', 'model:o3']).map((entry) => entry.subject)).toEqual(['tenant']);
  });

  it('M1: a bad member is refused by its path', () => {
    expect(fieldOf(() => parseCallCeilings({ tenant: [{ unit: 'tokens', limit: 1, windowSeconds: 86_401 }] }))).toBe('ceilings.tenant[0].windowSeconds');
    expect(fieldOf(() => parseCallCeilings({ tenant: [{ unit: 'tokens', limit: 1, windowSeconds: 0 }] }))).toBe('ceilings.tenant[0].windowSeconds');
    expect(fieldOf(() => parseCallCeilings({ models: { m: [{ unit: 'token', limit: 1, windowSeconds: 1 }] } }))).toBe('ceilings.models["m"][0].unit');
    expect(fieldOf(() => parseCallCeilings({ tenant: [{ unit: 'tokens', limit: -1, windowSeconds: 1 }] }))).toBe('ceilings.tenant[0].limit');
    expect(fieldOf(() => parseCallCeilings({ tenant: [{ unit: 'tokens', limit: 1, windowSeconds: 1, period: 'daily' }] }))).toBe('ceilings.tenant[0]');
    expect(fieldOf(() => parseCallCeilings({ tenant: [{ unit: 'tokens', limit: 1 }] }))).toBe('ceilings.tenant[0]');
    expect(fieldOf(() => parseCallCeilings({ tenant: [{ unit: 'tokens', limit: 1, period: 'weekly' }] }))).toBe('ceilings.tenant[0].period');
    expect(fieldOf(() => parseCallCeilings({ tennant: [] }))).toBe('ceilings.tennant');
    expect(fieldOf(() => parseCallCeilings({ groups: { g: { models: [], ceilings: [] } } }))).toBe('ceilings.groups["g"].models');
    expect(fieldOf(() => parseCallCeilings({ endUsers: { overides: {} } }))).toBe('ceilings.endUsers.overides');
    expect(fieldOf(() => parseCallCeilings({ defaultMaxOutputTokens: 0 }))).toBe('ceilings.defaultMaxOutputTokens');
    expect(fieldOf(() => parseCallCeilings({ leaseMs: 999 }))).toBe('ceilings.leaseMs');
    expect(fieldOf(() => parseCallCeilings({ tenant: Array.from({ length: 9 }, () => ({ unit: 'tokens', limit: 1, windowSeconds: 1 })) }))).toBe('ceilings.tenant');
    expect(fieldOf(() => parseCallCeilings([]))).toBe('ceilings');
    expect(fieldOf(() => parseCallCeilings(null))).toBe('ceilings');
    expect(fieldOf(() => parseCallCeilings({ agents: [] }))).toBe('ceilings.agents');
    expect(fieldOf(() => parseCallCeilings({ groups: { g: null } }))).toBe('ceilings.groups["g"]');
  });

  it('M1: takes exactly 8 ceilings on a subject, and a group with no ceilings has none', () => {
    const eight = Array.from({ length: 8 }, (_, i) => ({ unit: 'tokens', limit: i, windowSeconds: 1 + i }));
    expect(parseCallCeilings({ tenant: eight }).tenant).toHaveLength(8);
    expect(parseCallCeilings({ groups: { g: { models: ['m'] } } }).groups).toEqual({ g: { models: ['m'], ceilings: [] } });
  });

  it('says a ceiling and a refusal in words', () => {
    expect(describeCallCeiling({ unit: 'tokens', limit: 100, windowSeconds: 1 })).toBe('at most 100 tokens per 1 second');
    expect(describeCallCeiling({ unit: 'minorUnits', limit: 5, period: 'monthly' })).toBe('at most 5 minorUnits per UTC month');
    const ceiling = { unit: 'tokens' as const, limit: 100, windowSeconds: 60 };
    expect(callRefusalMessage({ code: 'CallNeverFits', tenant: 'acme', subject: 'model:m', ceiling, requested: 4196 })).toContain('can never fit: it may use 4196 tokens');
    const requests = { unit: 'requests' as const, limit: 0, period: 'monthly' as const };
    const zero = callRefusalMessage({ code: 'CallNeverFits', tenant: 'acme', subject: 'tenant', ceiling: requests, requested: 1 });
    expect(zero).toContain("it may use 1 request, more than the ceiling of tenant 'acme' (at most 0 requests per UTC month)");
    expect(zero).toContain('no call fits until the ceiling is raised');
    expect(zero).not.toContain('output cap');
    const money = { unit: 'minorUnits' as const, limit: 10, windowSeconds: 60 };
    expect(callRefusalMessage({ code: 'CallNeverFits', tenant: 'acme', subject: 'user:u', ceiling: money, requested: 20 })).toContain('maxMinorUnits');
    const limited = { code: 'CallLimited' as const, tenant: 'acme', subject: 'tenant', ceiling, counted: 90, held: 5, requested: 10, retryAtMs: Date.UTC(2026, 0, 1) };
    expect(callRefusalMessage({ ...limited, retryAfter: 'window' })).toContain('retry at 2026-01-01T00:00:00.000Z');
    expect(callRefusalMessage({ ...limited, retryAfter: 'in-flight' })).toContain('calls in flight hold 5');
    expect(callRefusalMessage({ ...limited, retryAfter: 'period' })).toContain('the period resets at');
  });
});

describe('names that are also Object members', () => {
  it('M1: keeps an override for an end user named __proto__ (and a model named constructor), through JSON and back', () => {
    const ceiling = { unit: 'requests', limit: 1, windowSeconds: 60 };
    const json = `{"endUsers":{"overrides":{"__proto__":[${JSON.stringify(ceiling)}]}},"models":{"constructor":[${JSON.stringify(ceiling)}]}}`;
    const parsed = parseCallCeilings(JSON.parse(json));
    expect(Object.hasOwn(parsed.endUsers?.overrides ?? {}, '__proto__')).toBe(true);
    expect(subjectCeilings(parsed, 'user:__proto__')).toEqual([ceiling]);
    expect(subjectCeilings(parsed, 'model:constructor')).toEqual([ceiling]);
    const again = parseCallCeilings(JSON.parse(JSON.stringify(parsed)));
    expect(subjectCeilings(again, 'user:__proto__')).toEqual([ceiling]);
  });
});

describe('the meter (docs/design/rules.md#m2)', () => {
  it('M12: a booking is recorded no earlier than the meter\'s newest', () => {
    const meter = { ...emptyCallMeter(0), latestAtMs: 5000 };
    expect(recordedCallInstantMs(4000, meter)).toBe(5000);
    expect(recordedCallInstantMs(6000, meter)).toBe(6000);
    expect(recordedCallInstantMs(10, emptyCallMeter(0))).toBe(10);
  });

  it('prunes only below a day and an hour, and never into the current month', () => {
    const midMonth = Date.UTC(2026, 0, 20, 12);
    expect(callPruneFloorMs(midMonth)).toBe(Date.UTC(2026, 0, 1) - 3_600_000);
    const secondOfMonth = Date.UTC(2026, 1, 1, 0, 0, 1);
    expect(callPruneFloorMs(secondOfMonth)).toBe(secondOfMonth - 86_400_000 - 3_600_000);
    const floor = callPruneFloorMs(midMonth);
    expect(isCallPruneDue(emptyCallMeter(floor - 59_999), midMonth)).toBe(false);
    expect(isCallPruneDue(emptyCallMeter(floor - 60_000), midMonth)).toBe(true);
  });
});

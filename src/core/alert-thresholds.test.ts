import { describe, expect, it } from 'vitest';

import { alertThresholdSource, alertThresholdsFor } from './alert-threshold-source.js';
import { crossingEvents, DEFAULT_ALERT_THRESHOLDS, parseAlertThresholds, thresholdAmount, thresholdLabel, thresholdStates } from './alert-thresholds.js';
import { QuotaError } from './errors.js';
import { eventKey } from './events.js';
import type { TenantQuota } from './quota.js';

// Spend-alert thresholds as pure rules (docs/design/rules.md#e2–#e5, #e7).

function fieldOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof QuotaError) return String(error.details?.field ?? error.message.split(':')[0]);
    throw error;
  }
  return undefined;
}

describe('parseAlertThresholds (E2)', () => {
  it('sorts percent, then tokens, then minor units, ascending, and drops duplicates', () => {
    expect(parseAlertThresholds([{ minorUnits: 5 }, { percent: 100 }, { tokens: 9 }, { percent: 80 }, { tokens: 3 }, { percent: 80 }])).toEqual([
      { percent: 80 },
      { percent: 100 },
      { tokens: 3 },
      { tokens: 9 },
      { minorUnits: 5 },
    ]);
    expect(parseAlertThresholds([])).toEqual([]);
  });

  it('refuses, naming the field, what is not a threshold', () => {
    expect(fieldOf(() => parseAlertThresholds({ percent: 80 }, 'q.alertThresholds'))).toBe('q.alertThresholds');
    expect(fieldOf(() => parseAlertThresholds([{ percent: 0 }], 'q'))).toBe('q[0].percent');
    expect(fieldOf(() => parseAlertThresholds([{ percent: 1001 }], 'q'))).toBe('q[0].percent');
    expect(fieldOf(() => parseAlertThresholds([{ percent: 50.5 }], 'q'))).toBe('q[0].percent');
    expect(fieldOf(() => parseAlertThresholds([{ percent: '80' }], 'q'))).toBe('q[0].percent');
    expect(fieldOf(() => parseAlertThresholds([{ tokens: 0 }], 'q'))).toBe('q[0].tokens');
    expect(fieldOf(() => parseAlertThresholds([{ minorUnits: -1 }], 'q'))).toBe('q[0].minorUnits');
    expect(fieldOf(() => parseAlertThresholds([{ percent: 80, tokens: 5 }], 'q'))).toBe('q[0]');
    expect(fieldOf(() => parseAlertThresholds([{}], 'q'))).toBe('q[0]');
    expect(fieldOf(() => parseAlertThresholds([null], 'q'))).toBe('q[0]');
    expect(fieldOf(() => parseAlertThresholds([{ ratio: 1 }], 'q'))).toBe('q[0].ratio');
    expect(fieldOf(() => parseAlertThresholds(Array.from({ length: 17 }, (_, i) => ({ percent: i + 1 })), 'q'))).toBe('q');
    expect(parseAlertThresholds(Array.from({ length: 16 }, (_, i) => ({ percent: i + 1 })))).toHaveLength(16);
    expect(parseAlertThresholds([{ percent: 1 }, { percent: 1000 }, { tokens: 1 }])).toHaveLength(3);
  });
});

describe('thresholdAmount and thresholdLabel (E2)', () => {
  it('a percentage rounds up, needs a ceiling above 0 and applies to either unit; an amount applies to its own unit, ceiling or none', () => {
    expect(thresholdAmount({ percent: 80 }, 'tokens', 999)).toBe(800);
    expect(thresholdAmount({ percent: 80 }, 'minorUnits', 1000)).toBe(800);
    expect(thresholdAmount({ percent: 100 }, 'tokens', 7)).toBe(7);
    expect(thresholdAmount({ percent: 150 }, 'tokens', 10)).toBe(15);
    expect(thresholdAmount({ percent: 1 }, 'tokens', 1)).toBe(1);
    expect(thresholdAmount({ percent: 1000 }, 'tokens', Number.MAX_SAFE_INTEGER)).toBe(Number(BigInt(Number.MAX_SAFE_INTEGER) * 10n));
    expect(thresholdAmount({ percent: 80 }, 'tokens', undefined)).toBeNull();
    expect(thresholdAmount({ percent: 80 }, 'tokens', 0)).toBeNull();
    expect(thresholdAmount({ tokens: 5 }, 'tokens', undefined)).toBe(5);
    expect(thresholdAmount({ tokens: 5 }, 'minorUnits', 100)).toBeNull();
    expect(thresholdAmount({ minorUnits: 5 }, 'minorUnits', 0)).toBe(5);
    expect(thresholdAmount({ minorUnits: 5 }, 'tokens', 100)).toBeNull();
  });

  it('labels name the threshold', () => {
    expect([{ percent: 80 }, { tokens: 5000 }, { minorUnits: 7 }].map(thresholdLabel)).toEqual(['80%', '5000 tokens', '7 minorUnits']);
  });
});

describe('crossingEvents (E3–E5)', () => {
  const subject = { tenant: 'acme', agent: null, unit: 'tokens' as const, period: '2026-01' };

  it('fires each threshold whose amount lies in (before, after], then ceiling.reached, keyed by what it is about', () => {
    const events = crossingEvents(subject, DEFAULT_ALERT_THRESHOLDS, 1000, 500, 1100, 42);
    expect(events.map((event) => event.key)).toEqual([
      eventKey('threshold.crossed', 'acme', null, 'tokens', '2026-01', '80%'),
      eventKey('threshold.crossed', 'acme', null, 'tokens', '2026-01', '100%'),
      eventKey('ceiling.reached', 'acme', null, 'tokens', '2026-01'),
    ]);
    expect(events[0]).toEqual({
      key: '["threshold.crossed","acme",null,"tokens","2026-01","80%"]',
      type: 'threshold.crossed',
      tenant: 'acme',
      atMs: 42,
      data: { agent: null, unit: 'tokens', period: '2026-01', threshold: { percent: 80 }, thresholdAmount: 800, ceiling: 1000, settled: 1100 },
    });
    expect(events[2]).toEqual({ key: events[2]?.key, type: 'ceiling.reached', tenant: 'acme', atMs: 42, data: { agent: null, unit: 'tokens', period: '2026-01', ceiling: 1000, settled: 1100 } });
  });

  it('an amount exactly at `after` fires, one exactly at `before` does not; nothing when spend does not grow', () => {
    expect(crossingEvents(subject, [{ tokens: 10 }], undefined, 9, 10, 1)).toHaveLength(1);
    expect(crossingEvents(subject, [{ tokens: 10 }], undefined, 10, 11, 1)).toHaveLength(0);
    expect(crossingEvents(subject, [{ tokens: 10 }], undefined, 0, 9, 1)).toHaveLength(0);
    expect(crossingEvents(subject, [{ tokens: 10 }], 10, 10, 10, 1)).toEqual([]);
    expect(crossingEvents(subject, [{ tokens: 1 }], 10, 5, 4, 1)).toEqual([]);
    expect(crossingEvents(subject, [], 10, 9, 10, 1).map((event) => event.type)).toEqual(['ceiling.reached']);
    expect(crossingEvents(subject, [], 10, 10, 11, 1)).toEqual([]);
    expect(crossingEvents(subject, [], 0, 0, 5, 1)).toEqual([]);
    expect(crossingEvents(subject, [], undefined, 0, 5, 1)).toEqual([]);
  });

  it('crossings come lowest amount first, whatever the list order', () => {
    const events = crossingEvents(subject, [{ percent: 80 }, { tokens: 300 }], 1000, 0, 900, 1);
    expect(events.map((event) => (event.data as { thresholdAmount: number }).thresholdAmount)).toEqual([300, 800]);
  });

  it("an agent's events name the agent in key and data", () => {
    const [event] = crossingEvents({ ...subject, agent: 'bot' }, [{ percent: 50 }], 10, 0, 5, 1);
    expect(event?.key).toBe(eventKey('threshold.crossed', 'acme', 'bot', 'tokens', '2026-01', '50%'));
    expect(event?.data.agent).toBe('bot');
  });
});

describe('threshold sources and states (E2, E7)', () => {
  const quota: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 100, agents: { bot: { alertThresholds: [{ percent: 10 }] }, plain: {} } };

  it('agent, else tenant, else plane-wide default, else 80 % and 100 %', () => {
    expect(alertThresholdsFor(quota, 'bot', { alertThresholds: [{ percent: 70 }] })).toEqual([{ percent: 10 }]);
    expect(alertThresholdSource(quota, 'bot', null)).toBe('agent');
    expect(alertThresholdsFor(quota, 'plain', { alertThresholds: [{ percent: 70 }] })).toEqual([{ percent: 70 }]);
    expect(alertThresholdSource(quota, 'plain', { alertThresholds: [] })).toBe('plane');
    expect(alertThresholdsFor(quota, 'ghost', null)).toBe(DEFAULT_ALERT_THRESHOLDS);
    expect(alertThresholdSource(quota, null, null)).toBe('default');
    const own = { ...quota, alertThresholds: [] };
    expect(alertThresholdsFor(own, null, { alertThresholds: [{ percent: 70 }] })).toEqual([]);
    expect(alertThresholdSource(own, 'plain', null)).toBe('tenant');
    expect(alertThresholdsFor({ period: 'monthly' }, 'toString', null)).toBe(DEFAULT_ALERT_THRESHOLDS);
    // An agent the quota does not name, or a quota naming no agent, inherits.
    expect(alertThresholdSource({ period: 'monthly' }, 'bot', null)).toBe('default');
    expect(alertThresholdSource({ period: 'monthly', alertThresholds: [] }, 'bot', null)).toBe('tenant');
    expect(alertThresholdSource(quota, 'ghost', { alertThresholds: [] })).toBe('plane');
    expect(alertThresholdSource(quota, 'toString', null)).toBe('default');
    expect(alertThresholdSource({ period: 'monthly', agents: { bot: { alertThresholds: [] } } }, null, null)).toBe('default');
    expect(alertThresholdSource(quota, 'plain', null)).toBe('default');
  });

  it('thresholdStates lists the thresholds that apply, with amounts and whether settled is at or past each', () => {
    expect(thresholdStates([{ percent: 50 }, { tokens: 60 }, { minorUnits: 1 }], 'tokens', 100, 60)).toEqual([
      { threshold: { percent: 50 }, label: '50%', amount: 50, crossed: true },
      { threshold: { tokens: 60 }, label: '60 tokens', amount: 60, crossed: true },
    ]);
    expect(thresholdStates([{ percent: 50 }], 'tokens', 100, 49)[0]?.crossed).toBe(false);
    expect(thresholdStates([{ percent: 50 }], 'tokens', null, 49)).toEqual([]);
  });
});

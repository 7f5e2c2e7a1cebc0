import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareHaltScopes,
  coveringHalt,
  describeHaltScope,
  type Halt,
  HALT_SCOPE_FORMS,
  haltCovers,
  haltScopeForms,
  haltScopeKey,
  type HaltScope,
  parseAnyHaltScope,
  parseHaltScope,
  haltReachesRunning,
  withdrawsFrom,
} from './halt-scope.js';

const DIGEST = 'ab'.repeat(32);
const OTHER_DIGEST = 'cd'.repeat(32);
const OPS = { actor: 'ops-carol', basis: 'authenticated' } as const;

const halt = (scope: HaltScope, reason = 'incident 42'): Halt => ({ scope, reason, by: OPS, atMs: 1_700_000_000_000 });

const HEX = [...'0123456789abcdef'];
const lowerHex = fc.string({ unit: fc.constantFrom(...HEX), minLength: 64, maxLength: 64 });
const anyCaseHex = fc.string({ unit: fc.constantFrom(...HEX, ...'ABCDEF'), minLength: 64, maxLength: 64 });
const rest = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }));
const scope: fc.Arbitrary<HaltScope> = fc.oneof(
  fc.constant<HaltScope>({ kind: 'tenant' }),
  rest.map((name): HaltScope => ({ kind: 'agent', name })),
  lowerHex.map((digest): HaltScope => ({ kind: 'revision', digest })),
  rest.map((principal): HaltScope => ({ kind: 'subject', principal })),
);

describe('parseHaltScope and haltScopeKey (D9)', () => {
  it('D9 parses tenant, agent with colons, revision with 64 hex; refuses empty rests, short digests and "Tenant"', () => {
    expect(parseHaltScope('tenant')).toEqual({ kind: 'tenant' });
    expect(parseHaltScope('agent:a:b')).toEqual({ kind: 'agent', name: 'a:b' });
    expect(parseHaltScope('agent:')).toBeNull();
    expect(parseHaltScope('subject:')).toBeNull();
    expect(parseHaltScope(`revision:${DIGEST}`)).toEqual({ kind: 'revision', digest: DIGEST });
    expect(parseHaltScope('revision:abc')).toBeNull();
    expect(parseHaltScope('Tenant')).toBeNull();
    for (const s of [{ kind: 'tenant' }, { kind: 'agent', name: 'a:b' }, { kind: 'revision', digest: DIGEST }] as const) {
      expect(parseHaltScope(haltScopeKey(s))).toEqual(s);
    }
  });

  it('refuses everything else: untrimmed, unknown prefixes, bad hex, wrong digest length', () => {
    for (const bad of [
      '',
      ' tenant',
      'tenant ',
      'TENANT',
      'tenant:',
      'team:x',
      'Agent:x',
      'revision:',
      'revision:zz',
      `revision:${'a'.repeat(63)}`,
      `revision:${'a'.repeat(65)}`,
      `revision:${'g'.repeat(64)}`,
      `revision: ${'a'.repeat(63)}`,
    ]) {
      expect(parseHaltScope(bad)).toBeNull();
    }
  });

  it('keys are the durable spelling', () => {
    expect(haltScopeKey({ kind: 'tenant' })).toBe('tenant');
    expect(haltScopeKey({ kind: 'agent', name: 'refunder' })).toBe('agent:refunder');
    expect(haltScopeKey({ kind: 'revision', digest: DIGEST })).toBe(`revision:${DIGEST}`);
    expect(haltScopeKey({ kind: 'subject', principal: 'user:alice' })).toBe('subject:user:alice');
    expect(parseHaltScope('subject:user:alice')).toEqual({ kind: 'subject', principal: 'user:alice' });
  });

  it('round-trips every valid scope', () => {
    fc.assert(
      fc.property(scope, (s) => {
        expect(parseHaltScope(haltScopeKey(s))).toEqual(s);
      }),
    );
  });

  it('normalises an upper-case revision digest to lowercase, and its key re-emits lowercase', () => {
    expect(parseHaltScope(`revision:${DIGEST.toUpperCase()}`)).toEqual({ kind: 'revision', digest: DIGEST });
    fc.assert(
      fc.property(anyCaseHex, (hex) => {
        const parsed = parseHaltScope(`revision:${hex}`);
        expect(parsed).toEqual({ kind: 'revision', digest: hex.toLowerCase() });
        expect(haltScopeKey(parsed as HaltScope)).toBe(`revision:${hex.toLowerCase()}`);
      }),
    );
  });

  it('parsing is stable: whatever parses, its key parses to the same scope', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc
        .tuple(fc.constantFrom('tenant', 'agent:', 'subject:', 'revision:'), fc.string({ maxLength: 70 }))
        .map(([prefix, s]) => prefix + s),
    );
    fc.assert(
      fc.property(text, (t) => {
        const parsed = parseHaltScope(t);
        if (parsed !== null) expect(parseHaltScope(haltScopeKey(parsed))).toEqual(parsed);
      }),
    );
  });
});

describe('haltCovers (D10, D11)', () => {
  const agentX = { name: 'x', digest: DIGEST };

  it('D10 tenant covers a run with neither agent nor chain', () => {
    expect(haltCovers({ kind: 'tenant' }, {})).toBe(true);
    expect(haltCovers({ kind: 'tenant' }, { agent: agentX, chain: ['u'] })).toBe(true);
  });

  it('D10 agent x does not cover agent y nor a run with no agent; it covers x at any revision', () => {
    const x: HaltScope = { kind: 'agent', name: 'x' };
    expect(haltCovers(x, { agent: { name: 'y', digest: DIGEST } })).toBe(false);
    expect(haltCovers(x, {})).toBe(false);
    expect(haltCovers(x, { chain: ['x'] })).toBe(false);
    expect(haltCovers(x, { agent: agentX })).toBe(true);
    expect(haltCovers(x, { agent: { name: 'x', digest: OTHER_DIGEST } })).toBe(true);
  });

  it('D10 revision matches by digest only', () => {
    const rev: HaltScope = { kind: 'revision', digest: DIGEST };
    expect(haltCovers(rev, { agent: { name: 'x', digest: DIGEST } })).toBe(true);
    expect(haltCovers(rev, { agent: { name: 'y', digest: DIGEST } })).toBe(true);
    expect(haltCovers(rev, { agent: { name: 'x', digest: OTHER_DIGEST } })).toBe(false);
    expect(haltCovers(rev, {})).toBe(false);
  });

  it('D10 subject u covers a chain with u at the root, in the middle, or acting; never a run with no chain', () => {
    const u: HaltScope = { kind: 'subject', principal: 'u' };
    expect(haltCovers(u, { chain: ['u', 'w', 'a'] })).toBe(true);
    expect(haltCovers(u, { chain: ['r', 'u', 'a'] })).toBe(true);
    expect(haltCovers(u, { chain: ['r', 'w', 'u'] })).toBe(true);
    expect(haltCovers(u, { chain: ['r', 'w', 'a'] })).toBe(false);
    expect(haltCovers(u, { chain: [] })).toBe(false);
    expect(haltCovers(u, {})).toBe(false);
    expect(haltCovers(u, { agent: { name: 'u', digest: DIGEST } })).toBe(false);
  });

  it('withdrawsFrom answers the principal only for a subject halt on the chain', () => {
    expect(withdrawsFrom({ kind: 'subject', principal: 'user:alice' }, ['user:alice', 'bot'])).toBe('user:alice');
    expect(withdrawsFrom({ kind: 'subject', principal: 'user:alice' }, ['bot'])).toBeNull();
    expect(withdrawsFrom({ kind: 'subject', principal: 'user:alice' }, undefined)).toBeNull();
    expect(withdrawsFrom({ kind: 'tenant' }, ['user:alice'])).toBeNull();
    expect(withdrawsFrom({ kind: 'agent', name: 'user:alice' }, ['user:alice'])).toBeNull();
  });
});

describe('which halt is reported', () => {
  it('D11 with tenant, agent and subject halts all covering a run, the subject halt is reported', () => {
    const halts = [
      halt({ kind: 'subject', principal: 'user:alice' }, 'credential withdrawn'),
      halt({ kind: 'tenant' }, 'incident 42'),
      halt({ kind: 'agent', name: 'refunder' }, 'bad deploy'),
    ];
    const target = { agent: { name: 'refunder', digest: DIGEST }, chain: ['user:alice', 'refunder'] };
    expect(coveringHalt(halts, target)?.reason).toBe('credential withdrawn');
    expect(coveringHalt([...halts].reverse(), target)?.reason).toBe('credential withdrawn');
  });

  it('names the narrowest covering halt, ignoring narrower ones that do not cover', () => {
    const halts = [
      halt({ kind: 'tenant' }, 'tenant'),
      halt({ kind: 'agent', name: 'refunder' }, 'agent'),
      halt({ kind: 'revision', digest: OTHER_DIGEST }, 'other revision'),
      halt({ kind: 'subject', principal: 'user:bob' }, 'bob'),
    ];
    expect(coveringHalt(halts, { agent: { name: 'refunder', digest: DIGEST }, chain: ['user:alice'] })?.reason).toBe('agent');
    expect(coveringHalt(halts, {})?.reason).toBe('tenant');
    expect(coveringHalt(halts.slice(1), {})).toBeNull();
    expect(coveringHalt([], {})).toBeNull();
  });

  it('the reported halt covers the run and no covering halt is narrower, in any order', () => {
    const principal = fc.constantFrom('u1', 'u2', 'u3');
    const halts = fc.array(
      fc.oneof(
        fc.constant<HaltScope>({ kind: 'tenant' }),
        fc.constantFrom('a1', 'a2').map((name): HaltScope => ({ kind: 'agent', name })),
        fc.constantFrom(DIGEST, OTHER_DIGEST).map((digest): HaltScope => ({ kind: 'revision', digest })),
        principal.map((p): HaltScope => ({ kind: 'subject', principal: p })),
      ).map((s) => halt(s, haltScopeKey(s))),
      { maxLength: 8 },
    );
    const target = fc.record({
      agent: fc.option(fc.record({ name: fc.constantFrom('a1', 'a2'), digest: fc.constantFrom(DIGEST, OTHER_DIGEST) }), {
        nil: undefined,
      }),
      chain: fc.option(fc.array(principal, { maxLength: 3 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(halts, target, (hs, t) => {
        const covering = hs.filter((h) => haltCovers(h.scope, t));
        const reported = coveringHalt(hs, t);
        if (covering.length === 0) {
          expect(reported).toBeNull();
          return;
        }
        expect(reported).not.toBeNull();
        const chosen = reported as Halt;
        expect(haltCovers(chosen.scope, t)).toBe(true);
        for (const h of covering) expect(compareHaltScopes(h.scope, chosen.scope)).toBeLessThanOrEqual(0);
        if (covering.some((h) => h.scope.kind === 'subject')) expect(chosen.scope.kind).toBe('subject');
      }),
    );
  });
});

describe('order, display and forms', () => {
  it('orders tenant < agent < revision < subject, then by the field', () => {
    const ordered: HaltScope[] = [
      { kind: 'tenant' },
      { kind: 'agent', name: 'a' },
      { kind: 'agent', name: 'b' },
      { kind: 'revision', digest: DIGEST },
      { kind: 'subject', principal: 'a' },
      { kind: 'subject', principal: 'z' },
    ];
    for (let i = 0; i < ordered.length; i += 1) {
      for (let j = 0; j < ordered.length; j += 1) {
        expect(Math.sign(compareHaltScopes(ordered[i] as HaltScope, ordered[j] as HaltScope))).toBe(Math.sign(i - j));
      }
    }
    // The kind decides before the field: a subject 'a' is narrower than an agent 'z'.
    expect(compareHaltScopes({ kind: 'subject', principal: 'a' }, { kind: 'agent', name: 'z' })).toBeGreaterThan(0);
  });

  it('compareHaltScopes is a total order', () => {
    fc.assert(
      fc.property(scope, scope, scope, (a, b, c) => {
        expect(Math.sign(compareHaltScopes(a, b)) === -Math.sign(compareHaltScopes(b, a))).toBe(true);
        expect(compareHaltScopes(a, b) === 0).toBe(haltScopeKey(a) === haltScopeKey(b));
        if (compareHaltScopes(a, b) <= 0 && compareHaltScopes(b, c) <= 0) {
          expect(compareHaltScopes(a, c)).toBeLessThanOrEqual(0);
        }
      }),
    );
  });

  it('describes scopes as the Halted message names them', () => {
    expect(describeHaltScope({ kind: 'tenant' })).toBe('the whole tenant');
    expect(describeHaltScope({ kind: 'agent', name: 'refunder' })).toBe("agent 'refunder'");
    expect(describeHaltScope({ kind: 'revision', digest: DIGEST })).toBe(`manifest revision ${DIGEST}`);
    expect(describeHaltScope({ kind: 'subject', principal: 'user:alice' })).toBe("everything acting for 'user:alice'");
  });

  it('D12 forms() is the four quoted forms joined by ", "', () => {
    const forms = ['tenant', 'agent:<metadata.name>', 'revision:<manifest digest>', 'subject:<principal on the chain>'];
    expect(HALT_SCOPE_FORMS).toEqual(forms);
    expect(haltScopeForms()).toBe(
      "'tenant', 'agent:<metadata.name>', 'revision:<manifest digest>', 'subject:<principal on the chain>'",
    );
    expect(Object.isFrozen(HALT_SCOPE_FORMS)).toBe(true);
  });
});

describe('scope text and withdrawal edges', () => {
  const HEX = 'ab'.repeat(32);

  it('only a revision: prefix makes a revision scope', () => {
    expect(parseHaltScope(`revision:${HEX}`)).toEqual({ kind: 'revision', digest: HEX });
    expect(parseHaltScope(`nonsense:${HEX}`)).toBeNull();
    expect(parseHaltScope(`${HEX}`)).toBeNull();
  });

  it('only a subject halt withdraws a principal', () => {
    expect(withdrawsFrom({ kind: 'tenant' }, ['alice'])).toBeNull();
    expect(withdrawsFrom({ kind: 'agent', name: 'alice' }, ['alice'])).toBeNull();
    expect(withdrawsFrom({ kind: 'subject', principal: 'alice' }, ['root', 'alice'])).toBe('alice');
    expect(withdrawsFrom({ kind: 'subject', principal: 'alice' }, undefined)).toBeNull();
  });
});

describe('the plane-wide halt and reaching running work (C44, C49)', () => {
  it('C49 the plane scope is keyed plane, covers every run, ranks below tenant, and is no tenant halt form', () => {
    const plane: HaltScope = { kind: 'plane' };
    expect(haltScopeKey(plane)).toBe('plane');
    expect(describeHaltScope(plane)).toBe('every tenant of the plane');
    expect(haltCovers(plane, {})).toBe(true);
    expect(compareHaltScopes(plane, { kind: 'tenant' })).toBeLessThan(0);
    expect(coveringHalt([halt(plane), halt({ kind: 'tenant' }, 'narrower')], {})?.reason).toBe('narrower');
    expect(parseHaltScope('plane')).toBeNull();
    expect(parseAnyHaltScope('plane')).toEqual(plane);
    expect(parseAnyHaltScope('agent:x')).toEqual({ kind: 'agent', name: 'x' });
  });

  it('C44 a subject halt always reaches running work; the others only when thrown to', () => {
    expect(haltReachesRunning(halt({ kind: 'subject', principal: 'p' }))).toBe(true);
    expect(haltReachesRunning(halt({ kind: 'tenant' }))).toBe(false);
    expect(haltReachesRunning({ ...halt({ kind: 'agent', name: 'x' }), reachesRunning: true })).toBe(true);
    expect(haltReachesRunning({ ...halt({ kind: 'plane' }), reachesRunning: false })).toBe(false);
  });
});

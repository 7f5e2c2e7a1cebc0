import fc from 'fast-check';
import { expect, it } from 'vitest';
import { QuotaError } from './errors.js';
import { identifierProblem, isIdentifier, MAX_IDENTIFIER_LENGTH, normaliseRunId, requireIdentifier, requireTenant } from './identifiers.js';

const CONTROL = [
  '\u0000',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u2028',
  '\u2029',
];

it('accepts 1 to 200 printable characters, Unicode included', () => {
  expect(MAX_IDENTIFIER_LENGTH).toBe(200);
  for (const ok of ['a', 'acme', 'tool://payments/refund', 'user:alice', 'ünïcødé', '租户', 'a b', 'x'.repeat(200), '😀', 'x😀y']) {
    expect(isIdentifier(ok)).toBe(true);
  }
});

it('refuses empty, over-long, blank and non-string identifiers', () => {
  for (const bad of ['', 'x'.repeat(201), ' ', '   ', '\u00a0', 42, null, undefined, ['a'], { id: 'a' }]) {
    expect(isIdentifier(bad)).toBe(false);
  }
});

it('refuses any identifier containing a control character or line separator', () => {
  for (const control of CONTROL) {
    expect(isIdentifier(control)).toBe(false);
    expect(isIdentifier(`run${control}1`)).toBe(false);
  }
});

it('accepts every printable string of 1–200 characters that is not blank', () => {
  const printable = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
    .filter((s) => s.length <= MAX_IDENTIFIER_LENGTH && !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(s))
    .filter((s) => s.trim().length > 0 && s.trim() === s)
    // '.' and '..' are refused on purpose: a URL path resolves them away (the test below).
    .filter((s) => s !== '.' && s !== '..');
  fc.assert(
    fc.property(printable, (s) => {
      expect(isIdentifier(s)).toBe(true);
    }),
  );
});

it('refuses a string with a control character wherever it sits', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 20 }), fc.constantFrom(...CONTROL), fc.string({ maxLength: 20 }), (a, c, b) => {
      expect(isIdentifier(`${a}${c}${b}`)).toBe(false);
    }),
  );
});

it('requireIdentifier names the field in an INVALID_ARGUMENT error', () => {
  expect(requireIdentifier('tenant', 'acme')).toBe('acme');
  try {
    requireIdentifier('tenant', 'bad\nname');
    expect.unreachable('a control character must be refused');
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    const quotaError = error as QuotaError;
    expect(quotaError.code).toBe('INVALID_ARGUMENT');
    expect(quotaError.details.field).toBe('tenant');
    expect(quotaError.message).toMatch(/^tenant: must hold no control or format character, but holds U\+000A at position 4, got "bad\\nname" \(identifiers are 1–200 characters/);
  }
  expect(() => requireIdentifier('grant', '')).toThrow(/^grant: /);
  expect(() => requireIdentifier('run', 'x'.repeat(201))).toThrow(/^run: /);
});

it('normaliseRunId prefixes a bare ULID and keeps other ids as given', () => {
  const ulid = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
  expect(normaliseRunId('run', ulid)).toBe(`run_${ulid}`);
  expect(normaliseRunId('run', `run_${ulid}`)).toBe(`run_${ulid}`);
  expect(normaliseRunId('run', 'my-own-id')).toBe('my-own-id');
  // Lower-case is not Crockford's canonical spelling, so it stays a caller-supplied id.
  expect(normaliseRunId('run', ulid.toLowerCase())).toBe(ulid.toLowerCase());
  expect(() => normaliseRunId('settlement.run', '')).toThrow(/^settlement\.run: /);
});

it("requireTenant refuses '*', which keys use for every tenant, and accepts other identifiers", () => {
  expect(requireTenant('tenant', 'acme')).toBe('acme');
  expect(requireTenant('tenant', '**')).toBe('**');
  expect(() => requireTenant('tenant', '*')).toThrow(/tenant: '\*' means every tenant for API keys and is not a tenant name; name one tenant/);
  expect(() => requireTenant('tenant', '')).toThrow(QuotaError);
});

it('refuses format characters that hide or reorder text, naming the code point and its position', () => {
  // U+202E right-to-left override, U+200B zero-width space, U+200D zero-width joiner, U+2066 left-to-right isolate, U+FEFF byte-order mark, U+00AD soft hyphen.
  for (const [char, code] of [
    ['\u202e', 'U+202E'],
    ['\u200b', 'U+200B'],
    ['\u200d', 'U+200D'],
    ['\u2066', 'U+2066'],
    ['\ufeff', 'U+FEFF'],
    ['\u00ad', 'U+00AD'],
  ] as const) {
    expect(isIdentifier(`acme${char}corp`)).toBe(false);
    expect(() => requireIdentifier('agent', `acme${char}corp`)).toThrow(`agent: must hold no control or format character, but holds ${code} at position 5`);
  }
  // The position counts code points, so an emoji before the character counts once.
  expect(() => requireIdentifier('tenant', '😀\u202e')).toThrow(/holds U\+202E at position 2/);
});

it('refuses lone surrogates, which the stores would mangle or merge, and keeps well-formed pairs', () => {
  for (const [bad, code, position] of [
    ['x\ud800', 'U+D800', 2],
    ['x\udc00', 'U+DC00', 2],
    ['\udc00😀', 'U+DC00', 1],
    ['😀\ud83d', 'U+D83D', 3],
  ] as const) {
    expect(isIdentifier(bad)).toBe(false);
    expect(() => requireIdentifier('tenant', bad)).toThrow(`tenant: must be well-formed Unicode, but holds a lone surrogate ${code} at position ${position}`);
  }
  expect(isIdentifier('x\ufffd')).toBe(true);
  expect(isIdentifier('\ud83d\ude00')).toBe(true);
});

it('refuses leading or trailing white space, which tables and labels would hide', () => {
  for (const bad of [' acme', 'acme ', '\u00a0acme', 'acme\u3000', '\u2003acme']) {
    expect(isIdentifier(bad)).toBe(false);
    expect(() => requireIdentifier('tenant', bad)).toThrow(/^tenant: must not begin or end with a space/);
  }
  expect(isIdentifier('a b')).toBe(true);
});

it('names the length and the type in its refusals', () => {
  expect(identifierProblem('x'.repeat(201))).toMatch(/^must be 1–200 characters, got 201 \(/);
  expect(identifierProblem('')).toMatch(/^must be 1–200 characters, got 0 \(/);
  // A URL path resolves . and .. away, so no route could name them; other dots are fine.
  expect(identifierProblem('.')).toMatch(/^must not be "\.", which no URL path can carry \(/);
  expect(identifierProblem('..')).toMatch(/^must not be "\.\.", which no URL path can carry \(/);
  expect(['...', '.a', 'a.', 'run.1'].map(identifierProblem)).toEqual([null, null, null, null]);
  expect(identifierProblem(7)).toMatch(/^must be a string, got /);
  expect(identifierProblem('   ')).toMatch(/^must not be blank/);
  expect(identifierProblem('acme')).toBeNull();
});

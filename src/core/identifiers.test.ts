import fc from 'fast-check';
import { expect, it } from 'vitest';
import { QuotaError } from './errors.js';
import { isIdentifier, MAX_IDENTIFIER_LENGTH, normaliseRunId, requireIdentifier, requireTenant } from './identifiers.js';

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
  for (const ok of ['a', 'acme', 'tool://payments/refund', 'user:alice', 'ünïcødé', '租户', 'a b', 'x'.repeat(200)]) {
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
    .filter((s) => s.length <= MAX_IDENTIFIER_LENGTH && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u.test(s))
    .filter((s) => s.trim().length > 0);
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
    expect(quotaError.message).toMatch(/^tenant: must be 1–200 printable characters/);
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

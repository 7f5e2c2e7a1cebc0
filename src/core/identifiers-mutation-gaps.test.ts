import { describe, expect, it } from 'vitest';

import { QuotaError } from './errors.js';
import { isIdentifier, MAX_IDENTIFIER_LENGTH, normaliseRunId, requireIdentifier, requireTenant } from './identifiers.js';

// Identifier rules that mutation testing found unasserted (docs/concepts/glossary.md#names).

const ULID = '01JB0000000000000000000000';

describe('normaliseRunId: only a whole ULID is taken for one', () => {
  it('prefixes a bare 26-character ULID and keeps run_<ULID> as it is', () => {
    expect(normaliseRunId('run', ULID)).toBe(`run_${ULID}`);
    expect(normaliseRunId('run', `run_${ULID}`)).toBe(`run_${ULID}`);
  });

  it('keeps a 27-character id that begins (or ends) like a ULID as given', () => {
    expect(normaliseRunId('run', `${ULID}0`)).toBe(`${ULID}0`);
    expect(normaliseRunId('run', `0${ULID}`)).toBe(`0${ULID}`);
    expect(normaliseRunId('run', `${ULID}-retry`)).toBe(`${ULID}-retry`);
  });

  it('keeps a 25-character id and one with a letter outside the ULID alphabet as given', () => {
    expect(normaliseRunId('run', ULID.slice(1))).toBe(ULID.slice(1));
    expect(normaliseRunId('run', `${ULID.slice(0, 25)}U`)).toBe(`${ULID.slice(0, 25)}U`);
    expect(normaliseRunId('run', ULID.toLowerCase())).toBe(ULID.toLowerCase());
  });

  it('refuses a run id that is not an identifier, naming the field it was given', () => {
    try {
      normaliseRunId('settlement.run', ' ');
      expect.unreachable('a blank run id was accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).details.field).toBe('settlement.run');
    }
  });
});

describe('isIdentifier: its bounds', () => {
  it('accepts exactly MAX_IDENTIFIER_LENGTH characters and refuses one more', () => {
    expect(isIdentifier('x'.repeat(MAX_IDENTIFIER_LENGTH))).toBe(true);
    expect(isIdentifier('x'.repeat(MAX_IDENTIFIER_LENGTH + 1))).toBe(false);
    expect(isIdentifier('x')).toBe(true);
    expect(isIdentifier('')).toBe(false);
  });

  it('refuses C0, DEL, C1 and line/paragraph separators, and accepts other non-ASCII text', () => {
    for (const bad of ['a\u0000', 'a\u001f', 'a\u007f', 'a\u0085', 'a\u009f', 'a\u2028', 'a\u2029']) expect(isIdentifier(bad)).toBe(false);
    for (const good of ['a\u0020b', 'a\u00a0b', 'zoë', 'a\u2027b']) expect(isIdentifier(good)).toBe(true);
  });

  it('refuses whitespace only, and surrounding white space', () => {
    expect(isIdentifier('   ')).toBe(false);
    // Surrounding spaces are refused too (docs/concepts/glossary.md#names), spaces inside are fine.
    expect(isIdentifier(' a ')).toBe(false);
    expect(isIdentifier('a a')).toBe(true);
  });
});

describe('requireTenant', () => {
  it('refuses *, the every-tenant mark of API keys, naming the field', () => {
    try {
      requireTenant('request.tenant', '*');
      expect.unreachable('* was accepted as a tenant');
    } catch (error) {
      expect((error as QuotaError).code).toBe('INVALID_ARGUMENT');
      expect((error as QuotaError).details.field).toBe('request.tenant');
    }
    expect(requireTenant('tenant', '**')).toBe('**');
  });
});

describe('isIdentifier: lone surrogates, at the edges of each range', () => {
  it('accepts well-formed pairs, the highest included, and refuses a half pair wherever it stands', () => {
    for (const good of ['a\ud800\udc00', 'a\udbff\udfff', '\ud83d\ude00x']) expect(isIdentifier(good)).toBe(true);
    for (const bad of ['a\ud800', 'a\udbff', '\ud800a', 'a\ud800\ue000', 'a\udc00', 'a\udfff', '\udfffa']) expect(isIdentifier(bad)).toBe(false);
  });

  it('names the lone surrogate and its position', () => {
    expect(() => requireIdentifier('name', 'ab\udbffc')).toThrow(/holds a lone surrogate U\+DBFF at position 3/);
    expect(() => requireIdentifier('name', 'a\udfff')).toThrow(/holds a lone surrogate U\+DFFF at position 2/);
  });
});

describe('requireIdentifier: a hidden character is shown escaped, never raw', () => {
  it('prints control and format characters as \\uXXXX with four digits', () => {
    let message = '';
    try {
      requireIdentifier('name', 'a\u0085b');
    } catch (error) {
      message = (error as QuotaError).message;
    }
    expect(message).toContain('holds U+0085 at position 2, got "a\\u0085b"');
    expect(message).not.toContain('\u0085');
    expect(() => requireIdentifier('name', 'x\u200by')).toThrow('got "x\\u200by"');
  });
});

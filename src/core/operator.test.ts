import { expect, it } from 'vitest';
import { parseOperator } from './operator.js';

it('parses an operator and defaults the basis to asserted', () => {
  expect(parseOperator({ actor: 'alice@example.com', basis: 'authenticated' })).toEqual({
    actor: 'alice@example.com',
    basis: 'authenticated',
  });
  expect(parseOperator({ actor: 'alice' })).toEqual({ actor: 'alice', basis: 'asserted' });
});

it('names the bad field: actor or basis', () => {
  expect(() => parseOperator({ basis: 'asserted' })).toThrow(/^by\.actor: /);
  expect(() => parseOperator({ actor: '' })).toThrow(/^by\.actor: /);
  expect(() => parseOperator(null, 'lift.by')).toThrow(/^lift\.by: must be an operator, { actor: '<name>', basis: 'asserted' }, got null/);
  expect(() => parseOperator('alice')).toThrow(/^by: must be an operator, .*got "alice"/);
  expect(() => parseOperator({ actor: 'alice', basis: 'trusted' })).toThrow(
    /^by\.basis: must be 'asserted' or 'authenticated'/,
  );
});

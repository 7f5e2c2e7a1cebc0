import { describe, expect, it } from 'vitest';

import { patchMembers } from './merge-patch.js';

describe('patchMembers (RFC 7396, one level)', () => {
  it('keeps null (a removal) and every value, in order, and leaves out members given as undefined', () => {
    expect(patchMembers({ a: 1, b: undefined, c: null, d: { e: undefined } })).toEqual([
      ['a', 1],
      ['c', null],
      ['d', { e: undefined }],
    ]);
    expect(patchMembers({})).toEqual([]);
  });
});

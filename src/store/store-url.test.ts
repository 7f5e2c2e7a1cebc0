import { describe, expect, it } from 'vitest';

import { redactStoreUrl } from './store-url.js';

describe('redactStoreUrl', () => {
  it('hides the password of a postgres URL and keeps the rest', () => {
    expect(redactStoreUrl('postgres://app:s3cret@db.internal:5432/quota?schema=qp')).toBe(
      'postgres://app:***@db.internal:5432/quota?schema=qp',
    );
    expect(redactStoreUrl('postgresql://app:s3cret@db/quota')).toBe('postgresql://app:***@db/quota');
  });

  it('leaves URLs without a password and SQLite forms unchanged', () => {
    expect(redactStoreUrl('postgres://app@db/quota')).toBe('postgres://app@db/quota');
    expect(redactStoreUrl('sqlite:/tmp/q.db')).toBe('sqlite:/tmp/q.db');
    expect(redactStoreUrl('./quota.db')).toBe('./quota.db');
  });
});

import { describe, expect, it } from 'vitest';

import { redactSecrets, redactStoreUrl } from './store-url.js';

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

  it('hides the password of a mistyped scheme, one holding an @, and every password= parameter', () => {
    expect(redactStoreUrl('postgress://app:s3cret@db/quota')).toBe('postgress://app:***@db/quota');
    expect(redactStoreUrl('postgres://app:p@ss@db/quota')).toBe('postgres://app:***@db/quota');
    expect(redactStoreUrl('postgres://db/quota?user=app&password=s3cret&sslmode=require')).toBe(
      'postgres://db/quota?user=app&password=***&sslmode=require',
    );
  });

  it('hides a password holding an unencoded #, / or ?, and the password= keyword of a libpq string, bare or quoted', () => {
    expect(redactStoreUrl('postgres://u:S3cret#PW@127.0.0.1:1/db')).toBe('postgres://u:***@127.0.0.1:1/db');
    expect(redactStoreUrl('postgres://u:S3c/re?t@h/db')).toBe('postgres://u:***@h/db');
    expect(redactStoreUrl('host=127.0.0.1 user=u password=S3cretPW dbname=db')).toBe('host=127.0.0.1 user=u password=*** dbname=db');
    expect(redactStoreUrl("host=h password='a b c' dbname=d")).toBe('host=h password=*** dbname=d');
    expect(redactSecrets('refused S3cret#PW', 'postgres://u:S3cret#PW@h/db')).toBe('refused ***');
  });

  it('redactSecrets takes the raw and the decoded password out of any text', () => {
    const url = 'postgres://app:s%40cret@db/quota';
    expect(redactSecrets(`could not open ${url}: password s@cret refused (s%40cret)`, url)).toBe(
      'could not open postgres://app:***@db/quota: password *** refused (***)',
    );
  });
});

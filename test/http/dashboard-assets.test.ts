import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DASHBOARD_CSP, requireMoneyDisplay } from '../../src/http/dashboard.js';
import { type ServiceFixture, serviceFixture } from './http-fixtures.js';

// Serving the dashboard's files: from the built directory only, with the CSP.

describe('dashboard assets at /ui/', () => {
  let fixture: ServiceFixture;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-ui-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(join(dir, 'app.js'), 'export {};');
    writeFileSync(join(dir, 'notes.txt'), 'not served: no known type');
    fixture = await serviceFixture({ dashboard: { assetsDir: dir, money: { currency: 'EUR', minorUnitsPerUnit: 100 } } });
  });
  afterAll(async () => {
    await fixture.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /ui/ with index.html and the strict policy, and /ui with a redirect to /ui/', async () => {
    const page = await fixture.app.inject({ method: 'GET', url: '/ui/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).toContain('<title>t</title>');
    const bare = await fixture.app.inject({ method: 'GET', url: '/ui' });
    expect(bare.statusCode).toBe(308);
    expect(bare.headers.location).toBe('/ui/');
    expect(DASHBOARD_CSP).not.toContain('unsafe');
  });

  it('serves the money display it was given in config.json', async () => {
    const config = await fixture.app.inject({ method: 'GET', url: '/ui/config.json' });
    expect(config.json()).toEqual({ currency: 'EUR', minorUnitsPerUnit: 100, refreshMs: 5000 });
  });

  it('answers 404 for a file it does not hold, a file of no known type, and a path out of its directory', async () => {
    for (const url of ['/ui/missing.js', '/ui/notes.txt', '/ui/..%2fpackage.json', '/ui/../package.json']) {
      const response = await fixture.app.inject({ method: 'GET', url });
      expect([url, response.statusCode]).toEqual([url, 404]);
      expect(response.body).not.toContain('"name": "quotaplane"');
    }
  });

  it('refuses a currency that is not three capital letters and a scale that is not a power of ten', () => {
    expect(() => requireMoneyDisplay({ currency: 'usd', minorUnitsPerUnit: 100 })).toThrow(/currency/);
    expect(() => requireMoneyDisplay({ currency: 'USD', minorUnitsPerUnit: 250 })).toThrow(/minorUnitsPerUnit/);
    expect(requireMoneyDisplay({ currency: 'JPY', minorUnitsPerUnit: 1 })).toEqual({ currency: 'JPY', minorUnitsPerUnit: 1 });
  });
});

describe('dashboard without built assets', () => {
  it('says how to build them', async () => {
    const fixture = await serviceFixture({ dashboard: { assetsDir: join(tmpdir(), 'quotaplane-no-such-dir-for-ui') } });
    try {
      const response = await fixture.app.inject({ method: 'GET', url: '/ui/' });
      expect(response.statusCode).toBe(404);
      expect(response.body).toContain('npm run build');
    } finally {
      await fixture.close();
    }
  });
});

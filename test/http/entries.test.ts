import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import * as client from '../../src/client/index.js';
import * as http from '../../src/http/index.js';

describe('the quotaplane/client and quotaplane/http entries', () => {
  it('package.json maps both subpaths to the built entries', () => {
    const exports = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, { default: string }> }).exports;
    expect(exports['./client']?.default).toBe('./dist/client/index.js');
    expect(exports['./http']?.default).toBe('./dist/http/index.js');
  });

  it('export the client, the app factory, key minting and the in-memory key store as values', () => {
    expect(typeof client.createClient).toBe('function');
    expect(typeof client.decodeProblem).toBe('function');
    for (const name of ['buildApp', 'mintApiKey', 'hashApiKey', 'generateApiKeySecret', 'statusOf', 'createMemoryApiKeyStore'] as const) {
      expect(typeof http[name], name).toBe('function');
    }
    expect(http.ROUTES.length).toBeGreaterThanOrEqual(11);
  });
});

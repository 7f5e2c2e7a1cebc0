import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

// quotaplane webhooks on a store (docs/guides/webhooks.md, docs/design/rules.md#h1–#h12).
describe('quotaplane webhooks', () => {
  let dir: { path: string; remove: () => void };
  let store: string;

  beforeEach(async () => {
    dir = temporaryDirectory();
    store = `sqlite:${join(dir.path, 'hooks.db')}`;
    await (await openStore(store)).close();
    // An endpoint names a tenant that exists.
    expect((await runCli(['quota', 'set', '--tenant', 'acme', '--new-tenant', '--store', store, '--actor', 'ops'])).status).toBe(0);
  });
  afterEach(() => dir.remove());

  it('H8/H10 add prints the secret once, list never shows it, rotate prints a new one, remove removes it; --json throughout', async () => {
    const added = await runCli(['webhooks', 'add', '--tenant', 'acme', '--endpoint', 'https://hooks.example.com/q', '--event-type', 'halt.set', 'halt.lifted', '--store', store]);
    expect(added.status, added.stderr).toBe(0);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(added.stdout)?.[0] as string;
    expect(added.stdout).toContain("tenant 'acme', halt.set, halt.lifted, to https://hooks.example.com/q");
    const id = /wh_[0-9A-Z]{26}/.exec(added.stdout)?.[0] as string;

    const listed = await runCli(['webhooks', 'list', '--store', store]);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+TENANT\s+URL\s+EVENTS\s+SECRETS\s+CREATED\s*$/);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(secret.slice(6));

    const rotated = JSON.parse((await runCli(['webhooks', 'rotate', id, '--overlap', '1h', '--store', store, '--json'])).stdout) as { secret: string; endpoint: { secrets: unknown[] } };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.endpoint.secrets).toHaveLength(2);

    const deliveries = JSON.parse((await runCli(['webhooks', 'deliveries', id, '--status', 'failed', '--store', store, '--json'])).stdout);
    expect(deliveries).toEqual({ deliveries: [] });

    const plane = JSON.parse((await runCli(['webhooks', 'add', '--plane', '--endpoint', 'http://127.0.0.1:9/all', '--store', store, '--json'])).stdout) as { endpoint: { tenant: null } };
    expect(plane.endpoint.tenant).toBeNull();
    expect(JSON.parse((await runCli(['webhooks', 'list', '--tenant', 'acme', '--store', store, '--json'])).stdout).webhooks).toHaveLength(1);

    expect((await runCli(['webhooks', 'remove', id, '--store', store])).stdout).toContain(`removed ${id}`);
    const again = await runCli(['webhooks', 'remove', id, '--store', store]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`no webhook endpoint '${id}'`);
  });

  it('names the bad flag: neither --tenant nor --plane, a URL that is not http(s), a resend of no delivery', async () => {
    const neither = await runCli(['webhooks', 'add', '--endpoint', 'https://x.example', '--store', store]);
    expect(neither.status).toBe(2);
    expect(neither.stderr).toContain('give --tenant <tenant> or --plane');
    const typo = await runCli(['webhooks', 'add', '--tenant', 'acmee', '--endpoint', 'https://x.example', '--store', store]);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain("did you mean 'acme'");
    const badUrl = await runCli(['webhooks', 'add', '--tenant', 'acme', '--endpoint', 'ftp://x', '--store', store]);
    expect(badUrl.status).not.toBe(0);
    expect(badUrl.stderr).toContain('url: must be an absolute http:// or https:// URL');
    const resend = await runCli(['webhooks', 'resend', 'wh_00000000000000000000000000.1', '--store', store]);
    expect(resend.status).toBe(1);
    expect(resend.stderr).toContain("no webhook delivery 'wh_00000000000000000000000000.1'");
  });
});

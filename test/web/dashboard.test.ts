import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { launchChromium } from './browser.js';
import { type DashboardServer, HOSTILE_AGENT, startDashboardServer, WONKA_AGENT } from './dashboard-server.js';

// The operator dashboard in a real Chromium against a real `quotaplane serve` on a
// SQLite file. Every wait is for an element or an answer, bounded by ACTION_TIMEOUT_MS; none sleeps.

const ACTION_TIMEOUT_MS = 30_000;
// A whole test: sign-in, a few pages, an act or two. Generous, because two cores are shared.
const TEST_TIMEOUT_MS = 180_000;
const SHOTS = join(import.meta.dirname, '..', '..', '.test-results', 'dashboard');
const HOSTILE_REASON = '<img src=x onerror=alert(1)>';

// Runs in the page: the elements whose box reaches past the window's right edge, as tag.class.
const STICKING_OUT = `[...document.querySelectorAll('body *')]
  .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
  .map((element) => element.tagName.toLowerCase() + (element.className ? '.' + String(element.className).split(' ').join('.') : ''))`;

// Runs in the page: the focused element, the name a person hears for it (its aria-label, its
// <label>, or its text), and its computed outline.
const FOCUSED_CONTROL = `(() => {
  const element = document.activeElement;
  const style = getComputedStyle(element);
  const label = element.getAttribute('aria-label') ?? (element.id ? document.querySelector('label[for="' + element.id + '"]')?.textContent : null) ?? element.textContent ?? '';
  return { tag: element.tagName, label: label.trim(), outline: style.outlineStyle + ' ' + style.outlineWidth };
})()`;

let server: DashboardServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [server, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('operator dashboard in Chromium', { timeout: TEST_TIMEOUT_MS }, () => {
  let context: BrowserContext;
  let page: Page;
  // Every alert/confirm/prompt the page opens, and every Content-Security-Policy violation it reports.
  let dialogs: string[];
  let cspViolations: string[];
  let pageErrors: string[];

  beforeEach(async () => {
    // A locale of its own: a headless browser would otherwise take one from the environment
    // (`en-US@posix` under LANG=C), which Intl refuses.
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'Europe/Berlin' });
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    page = await context.newPage();
    dialogs = [];
    cspViolations = [];
    pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  });

  afterEach(async () => {
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  async function signIn(key: string): Promise<void> {
    const response = await page.goto(`${server.url}/ui/`);
    expect(response?.status()).toBe(200);
    await page.getByLabel('Operator key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function openTenant(tenant: string): Promise<void> {
    await page.locator('table.tenants').getByRole('link', { name: tenant, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `Tenant “${tenant}”` }).or(page.getByRole('heading', { level: 1, name: `Tenant ${tenant}` })).first().waitFor();
    await page.getByRole('heading', { level: 2, name: 'Audit log' }).waitFor();
  }

  const rowOf = (tenant: string): Locator => page.locator('table.tenants tbody tr').filter({ has: page.getByRole('link', { name: tenant, exact: true }) });

  it('serves /ui/ with a strict Content-Security-Policy and no inline script or style', async () => {
    const response = await page.goto(`${server.url}/ui/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await page.locator('script:not([src]), style').count()).toBe(0);
  });

  it('signs in with an operator key and shows a tenant at its ceiling on the overview', async () => {
    await signIn(server.keys.operator);
    await page.getByRole('heading', { level: 1, name: 'All tenants' }).waitFor();
    await page.getByText('Signed in as').waitFor();
    const acme = rowOf('acme');
    await acme.waitFor();
    expect(await acme.locator('td[data-label="Running"]').innerText()).toMatch(/2 runs of 2 runs\s*at ceiling/);
    // Sorted closest to a ceiling first: acme (2 of 2 runs) leads.
    expect(await page.locator('table.tenants tbody tr th a').first().innerText()).toBe('acme');
    expect(await rowOf('umbrella').locator('td[data-label="Halts"]').innerText()).toContain('tenant');
    expect(await page.getByRole('status').filter({ hasText: 'Read at' }).innerText()).toMatch(/Read at \d\d:\d\d:\d\d UTC/);
    // Money is shown as currency from micro-USD: globex settled 1,140,000 minor units today.
    expect(await rowOf('globex').locator('td[data-label="Money this period"]').innerText()).toContain('$1.14');
    await page.setViewportSize({ width: 1200, height: 640 });
    await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });

    await page.getByLabel('Search tenants').fill('glo');
    await page.locator('table.tenants tbody tr').filter({ hasText: 'globex' }).waitFor();
    expect(await page.locator('table.tenants tbody tr').count()).toBe(1);
  });

  it('refuses a runner key with a message that says an operator key is needed', async () => {
    await signIn(server.keys.runner);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/runner key \('acme-workers', tenant 'acme'\).*needs an operator key/);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.getByLabel('Operator key').fill('qp_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
  });

  it('shows an operator key of one tenant that tenant only, and sign-out forgets the key', async () => {
    await signIn(server.keys.globexOperator);
    await rowOf('globex').waitFor();
    expect(await page.locator('table.tenants tbody tr').count()).toBe(1);
    expect(await page.getByText("operator of tenant 'globex'").count()).toBe(1);
    // The key is kept nowhere in the tab: not in the URL, nor in sessionStorage or localStorage.
    expect(page.url()).not.toContain('qp_');
    expect(await page.evaluate('sessionStorage.length + localStorage.length')).toBe(0);
    await page.goto(`${server.url}/ui/#/tenant/acme`);
    await page.getByRole('heading', { level: 1, name: 'Not available' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Operator key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('Operator key').waitFor();
  });

  it('signs in with a session cookie (HttpOnly, SameSite=Strict, /v1 only), keeps no key in the tab, and sign-out ends the session on the server', async () => {
    await signIn(server.keys.operator);
    await page.getByText('Signed in as').waitFor();
    const cookies = await context.cookies(`${server.url}/v1/key`);
    expect(cookies).toHaveLength(1);
    const [cookie] = cookies;
    expect(cookie).toMatchObject({ name: 'qp_session', httpOnly: true, sameSite: 'Strict', path: '/v1', secure: false });
    expect(cookie?.value).not.toContain(server.keys.operator);
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate('sessionStorage.length + localStorage.length')).toBe(0);
    expect(JSON.stringify(await page.evaluate('[Object.entries(sessionStorage), Object.entries(localStorage)]'))).not.toContain('qp_');
    // A reload keeps the session: the cookie stands for the key.
    await page.reload();
    await page.getByText('Signed in as').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed out' }).waitFor();
    // The old cookie, replayed, is refused: the session ended on the server, not only in the tab.
    const replayed = await fetch(`${server.url}/v1/key`, { headers: { cookie: `qp_session=${cookie?.value ?? ''}` } });
    expect(replayed.status).toBe(401);
    expect(await replayed.text()).toContain('session ended');
    // A later failed sign-in shows its error without the "Signed out" notice above it.
    await page.getByLabel('Operator key').fill('qp_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    expect(await page.getByText('Signed out').count()).toBe(0);
  });

  it('goes back to sign-in, saying so, when the session is ended elsewhere (another tab signed out)', async () => {
    await signIn(server.keys.operator);
    await page.getByText('Signed in as').waitFor();
    const [cookie] = await context.cookies(`${server.url}/v1/key`);
    const ended = await fetch(`${server.url}/v1/session`, { method: 'DELETE', headers: { cookie: `qp_session=${cookie?.value ?? ''}`, 'x-quotaplane-csrf': '1' } });
    expect(await ended.json()).toEqual({ ended: true });
    // The overview's next refresh is refused, and the page asks for a key again.
    await page.getByLabel('Operator key').waitFor();
    await page.getByRole('status').filter({ hasText: 'The session ended' }).waitFor();
  });

  it('manages API keys: creates one with an expiry (secret shown once), rotates it with an overlap, revokes it, and shows last use', async () => {
    await signIn(server.keys.operator);
    await page.getByText('Signed in as').waitFor();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    // The signed-in key has been used: its last use is shown (coarse, but recorded once at least).
    const own = page.locator('table.keys tbody tr').filter({ has: page.getByRole('rowheader', { name: 'ops-alice', exact: true }) });
    await page.reload();
    await own.waitFor();
    expect(await own.locator('td[data-label="Last used"]').innerText()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);

    await page.getByLabel('Name', { exact: true }).fill('ci-deployer');
    await page.getByLabel('Role', { exact: true }).selectOption('runner');
    await page.getByLabel('Tenant', { exact: true }).fill('acme');
    await page.getByLabel('Expires').selectOption({ label: 'in 30 days' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('new-key').innerText();
    expect(secret).toMatch(/^qp_[A-Za-z0-9_-]{43}$/);
    const row = page.locator('table.keys tbody tr').filter({ has: page.getByRole('rowheader', { name: 'ci-deployer', exact: true }) });
    await row.first().waitFor();
    expect(await row.first().locator('td[data-label="Expires"]').innerText()).toMatch(/UTC/);
    expect(await row.first().locator('td[data-label="Last used"]').innerText()).toBe('not yet');
    expect((await fetch(`${server.url}/v1/key`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    await page.getByRole('button', { name: 'I stored it' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);

    await page.getByRole('button', { name: 'Rotate ci-deployer' }).click();
    await page.getByLabel('Old key keeps working').selectOption({ label: 'end it now' });
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const rotated = await page.getByTestId('new-key').innerText();
    expect(rotated).not.toBe(secret);
    await page.locator('table.keys tbody tr').filter({ hasText: 'ci-deployer' }).filter({ hasText: 'expired' }).waitFor();
    expect((await fetch(`${server.url}/v1/key`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
    expect((await fetch(`${server.url}/v1/key`, { headers: { authorization: `Bearer ${rotated}` } })).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke ci-deployer' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.locator('table.keys tbody tr').filter({ hasText: 'ci-deployer' }).filter({ hasText: 'revoked' }).waitFor();
    expect((await fetch(`${server.url}/v1/key`, { headers: { authorization: `Bearer ${rotated}` } })).status).toBe(401);
    expect(dialogs).toEqual([]);
  });

  it('throws and lifts an agent halt behind confirmations, and finds both in the audit log under the key name', async () => {
    await signIn(server.keys.operator);
    await openTenant('acme');
    const haltForm = page.locator('form', { has: page.getByRole('heading', { name: 'Throw a halt' }) });
    await haltForm.getByLabel('Scope').selectOption('agent');
    await haltForm.getByLabel('Agent name').fill('support-bot');
    await haltForm.getByLabel('Reason (required)').fill('refund loop on ticket 4411');
    await haltForm.getByLabel('Reaches running work').check();
    await haltForm.getByRole('button', { name: 'Throw halt…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Throw this halt?' });
    await confirm.getByText('agent:support-bot').waitFor();
    await confirm.getByText('reaches running work: the running runs it covers answer Withheld').waitFor();
    await confirm.getByRole('button', { name: 'Throw halt', exact: true }).click();
    await confirm.waitFor({ state: 'hidden' });
    // C45: the confirmation counts the running runs the halt reaches.
    await page.getByText(/Halt on agent:support-bot thrown; it stops admission and running work\. It reaches \d+ running runs?/).waitFor();

    const standing = page.locator('section#halts table, section[aria-labelledby="halts"] table').first();
    await standing.getByText('refund loop on ticket 4411').waitFor();
    await page.getByRole('button', { name: 'Lift halt on agent:support-bot' }).click();
    const lift = page.getByRole('dialog', { name: 'Lift this halt?' });
    await lift.getByText('refund loop on ticket 4411').waitFor();
    await lift.getByRole('button', { name: 'Lift halt', exact: true }).click();
    await page.getByText('Halt on agent:support-bot lifted.').waitFor();
    await page.getByText('No halt stands.').waitFor();

    const audit = page.locator('table.audit tbody tr');
    const lifted = audit.filter({ has: page.locator('td[data-label="Action"]', { hasText: /^lift$/ }) }).filter({ hasText: 'agent:support-bot' });
    const thrown = audit.filter({ has: page.locator('td[data-label="Action"]', { hasText: /^halt$/ }) }).filter({ hasText: 'agent:support-bot' });
    await lifted.first().waitFor();
    await thrown.first().waitFor();
    expect(await lifted.first().locator('td[data-label="Who"]').innerText()).toBe('ops-alice (authenticated)');
    expect(await thrown.first().locator('td[data-label="Who"]').innerText()).toBe('ops-alice (authenticated)');
    await page.getByText(/Hash chain verified: \d+ rows/).waitFor();
    // The rate ceilings show their window counts.
    const rates = page.locator('section[aria-labelledby="rates"] tbody tr');
    expect(await rates.allInnerTexts()).toEqual([
      expect.stringMatching(/tool:\/\/payments\/refund\s+at most 5 per 600 s\s+3 of 5 dispatches/),
      expect.stringMatching(/tool:\/\/payments\/refund\s+at most 100 per 86,400 s\s+3 of 100 dispatches/),
    ]);
    // The model-call ceilings: booked usage and the call in flight, per subject.
    const calls = page.locator('section[aria-labelledby="model-calls"]');
    await calls.getByRole('heading', { name: 'End user u-7' }).waitFor();
    await calls.screenshot({ path: join(SHOTS, 'model-calls.png') });
    expect(await calls.getByRole('heading', { level: 3 }).allInnerTexts()).toEqual(['Whole tenant', 'Model gpt-4.1', 'End user u-7']);
    expect(await calls.getByRole('group', { name: 'Whole tenant' }).innerText()).toMatch(/Tokens per 1 min \(sliding\)\s+30,000 tokens booked \+ 8,000 tokens in flight of 100,000 tokens/);
    expect(await calls.getByRole('group', { name: 'Model gpt-4.1' }).innerText()).toMatch(/Requests per 1 min \(sliding\)\s+1 request booked \+ 1 request in flight of 10 requests/);
    expect(await calls.getByRole('group', { name: 'End user u-7' }).innerText()).toMatch(/Tokens per 1 h \(sliding\)\s+30,000 tokens booked \+ 8,000 tokens in flight of 50,000 tokens/);
  });

  it('shows the validation message from the API when a quota edit is refused, and replaces nothing', async () => {
    await signIn(server.keys.operator);
    await openTenant('globex');
    await page.getByRole('button', { name: 'Edit quota…' }).click();
    await page.getByLabel('Tokens per period ceiling (tokens)').fill('-5');
    await page.getByRole('button', { name: 'Review the new quota…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Replace the quota?' });
    // The whole quota is shown before it replaces the old one.
    expect(await confirm.locator('tbody').innerText()).toMatch(/Tokens per period ceiling\s+200,000 tokens\s+-5/);
    await confirm.getByRole('button', { name: 'Replace quota' }).click();
    const problem = page.locator('#quota-problem');
    await problem.waitFor();
    expect(await problem.innerText()).toMatch(/maxTokensPerPeriod/);
    expect(await page.getByLabel('Tokens per period ceiling (tokens)').getAttribute('aria-invalid')).toBe('true');
    const stored = await fetch(`${server.url}/v1/tenants/globex/quota`, { headers: { authorization: `Bearer ${server.keys.operator}` } });
    expect(((await stored.json()) as { quota: { maxTokensPerPeriod?: number } }).quota.maxTokensPerPeriod).toBe(200_000);
  });

  it('shows a hostile halt reason and agent name as text: no element is made and no dialog fires', async () => {
    await signIn(server.keys.operator);
    await openTenant('acme');
    const haltForm = page.locator('form', { has: page.getByRole('heading', { name: 'Throw a halt' }) });
    await haltForm.getByLabel('Scope').selectOption('subject');
    await haltForm.getByLabel('Principal').fill('mallory@evil.example');
    await haltForm.getByLabel('Reason (required)').fill(HOSTILE_REASON);
    await haltForm.getByRole('button', { name: 'Throw halt…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Throw this halt?' });
    await confirm.getByText(HOSTILE_REASON, { exact: true }).waitFor();
    await confirm.getByRole('button', { name: 'Throw halt', exact: true }).click();
    await confirm.waitFor({ state: 'hidden' });

    await page.locator('td.reason').getByText(HOSTILE_REASON, { exact: true }).first().waitFor();
    await page.locator('table.audit').getByText(HOSTILE_REASON).first().waitFor();
    await page.getByText(HOSTILE_AGENT, { exact: true }).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'tenant.png'), fullPage: true });
    await page.locator('section[aria-labelledby="history"]').screenshot({ path: join(SHOTS, 'tenant-history.png') });
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(dialogs).toEqual([]);

    // Leave acme as it was for the other tests.
    await page.getByRole('button', { name: 'Lift halt on subject:mallory@evil.example' }).click();
    await page.getByRole('dialog', { name: 'Lift this halt?' }).getByRole('button', { name: 'Lift halt', exact: true }).click();
    await page.getByText('No halt stands.').waitFor();
    expect(dialogs).toEqual([]);
  });

  it('settles a stranded run with its real spend behind a confirmation, audited under the key name', async () => {
    await signIn(server.keys.operator);
    await openTenant('acme');
    // The crashed run needs a person once, with both its reasons.
    const attention = page.locator('section[aria-labelledby="attention"] li').filter({ hasText: 'run-stranded' });
    expect(await attention.count()).toBe(1);
    expect(await attention.innerText()).toMatch(/^run\.stranded \+ pass\.unsettled · run run-stranded/);
    await page.getByRole('button', { name: 'Settle run run-stranded' }).click();
    const confirm = page.getByRole('dialog', { name: 'Settle pass 1 of run run-stranded?' });
    await confirm.getByLabel('Tokens spent').fill('1500');
    // A blank money field is not read as 0: the API names the missing member.
    await confirm.getByRole('button', { name: 'Settle', exact: true }).click();
    await confirm.getByRole('alert').filter({ hasText: 'minorUnits' }).waitFor();
    // Money is typed in currency units: $0.02 is 20,000 micro-USD, exactly.
    await confirm.getByLabel(/Money spent \(USD/).fill('0.0200001');
    await confirm.getByRole('button', { name: 'Settle', exact: true }).click();
    await confirm.getByRole('alert').filter({ hasText: /spend\.minorUnits.*more decimals than the minor unit allows/ }).waitFor();
    await confirm.getByLabel(/Money spent \(USD/).fill('0.02');
    await confirm.getByRole('button', { name: 'Settle', exact: true }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText('Run run-stranded pass 1: settled.').waitFor();
    const settled = page.locator('table.audit tbody tr').filter({ has: page.locator('td[data-label="Action"]', { hasText: /^run\.settle$/ }) });
    await settled.first().waitFor();
    expect(await settled.first().locator('td[data-label="Who"]').innerText()).toBe('ops-alice (authenticated)');
    expect(await settled.first().locator('td[data-label="Detail"]').innerText()).toMatch(/"tokens": 1500/);
    expect(await settled.first().locator('td[data-label="Detail"]').innerText()).toMatch(/"minorUnits": 20000\b/);
    await page.locator('section[aria-labelledby="runs"] tbody tr').filter({ hasText: 'run-stranded' }).waitFor({ state: 'detached' });
  });

  it('refreshes by itself, and says when the server is unreachable while keeping what it read', async () => {
    await signIn(server.keys.operator);
    const freshness = page.locator('p.freshness');
    await freshness.filter({ hasText: 'Read at' }).waitFor();
    const first = await freshness.innerText();
    // The next read (every 5 s) changes the time shown, without a reload.
    // (A string polled with waitForFunction would be eval, which the page's policy refuses: a locator instead.)
    await page.locator('p.freshness', { hasNotText: first }).filter({ hasText: 'Read at' }).waitFor({ timeout: 30_000 });
    // Cut the page off from the API: the banner says so, and the tenants stay on screen.
    await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
    const banner = page.getByRole('alert').filter({ hasText: 'The server is unreachable' });
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.innerText()).toMatch(/Showing what was read at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(await rowOf('acme').count()).toBe(1);
    await page.unroute('**/v1/**');
    await freshness.filter({ hasText: 'Read at' }).waitFor({ timeout: 30_000 });
  });

  it('still shows a tenant, and says the chart cannot be drawn, in a browser whose locale Intl refuses', async () => {
    const odd = await browser.newContext({ locale: 'en-US@posix', timezoneId: 'UTC' });
    try {
      const oddPage = await odd.newPage();
      const errors: string[] = [];
      oddPage.on('pageerror', (error) => errors.push(error.message));
      await oddPage.goto(`${server.url}/ui/`);
      await oddPage.getByLabel('Operator key').fill(server.keys.operator);
      await oddPage.getByRole('button', { name: 'Sign in' }).click();
      await oddPage.getByRole('link', { name: 'acme', exact: true }).click();
      await oddPage.getByRole('heading', { level: 2, name: 'Audit log' }).waitFor();
      // Either the chart draws (a browser that accepts the tag) or it says why not; the page stands.
      await oddPage.locator('figure.chart canvas').or(oddPage.getByText('The chart could not be drawn in this browser')).first().waitFor();
      expect(errors).toEqual([]);
    } finally {
      await odd.close();
    }
  });

  it('stays readable at a narrow window width', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(server.keys.operator);
    await rowOf('acme').waitFor();
    // Nothing is wider than the window: no sideways scrolling (the message names what sticks out).
    expect(await page.evaluate<string[]>(STICKING_OUT)).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(SHOTS, 'overview-narrow.png'), fullPage: true });
    await openTenant('acme');
    expect(await page.evaluate<string[]>(STICKING_OUT)).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(SHOTS, 'tenant-narrow.png'), fullPage: true });
    await page.locator('section[aria-labelledby="runs"]').screenshot({ path: join(SHOTS, 'tenant-narrow-runs.png') });
    // The model-call bars, once read, fit the window too.
    const calls = page.locator('section[aria-labelledby="model-calls"]');
    await calls.getByRole('heading', { name: 'End user u-7' }).waitFor();
    expect(await page.evaluate<string[]>(STICKING_OUT)).toEqual([]);
    await calls.screenshot({ path: join(SHOTS, 'model-calls-narrow.png') });
  });

  it('reaches every control by keyboard, each with a name and a visible focus', async () => {
    await signIn(server.keys.operator);
    await rowOf('umbrella').waitFor();
    const seen: { tag: string; label: string; outline: string }[] = [];
    // Tab from the page's heading to the last tenant link; every stop must have a name and an outline.
    while (seen.length < 20 && seen.at(-1)?.label !== 'umbrella') {
      await page.keyboard.press('Tab');
      seen.push(await page.evaluate<{ tag: string; label: string; outline: string }>(FOCUSED_CONTROL));
    }
    for (const focus of seen) {
      expect(focus.tag, JSON.stringify(focus)).not.toBe('BODY');
      expect(focus.label, JSON.stringify(focus)).not.toBe('');
      expect(focus.outline, JSON.stringify(focus)).toMatch(/solid 3px/);
    }
    expect(seen.map((focus) => focus.label)).toEqual(expect.arrayContaining(['Search tenants', 'Sort by', 'acme', 'globex', 'umbrella']));
    // The top bar comes before the heading: Shift+Tab back from the heading reaches Sign out.
    await page.getByRole('heading', { level: 1, name: 'All tenants' }).focus();
    await page.keyboard.press('Shift+Tab');
    expect((await page.evaluate<{ label: string }>(FOCUSED_CONTROL)).label).toBe('Sign out');
  });
  const REFUSED_BUDGET = { maxTokens: 4_000, maxCallTokens: 400, maxMinorUnits: 40_000, maxCallMinorUnits: 4_000 };

  async function api(method: string, path: string, key: string, body?: unknown): Promise<Response> {
    return fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  it('C49: shows a standing plane-wide halt first in the plane view, with what it reaches, and not once it is lifted', async () => {
    expect((await api('POST', '/v1/plane/halt', server.keys.operator, { reason: 'provider outage', reachesRunning: true })).status).toBe(200);
    try {
      await signIn(server.keys.operator);
      const banner = page.locator('section.plane .plane-halt');
      await banner.waitFor();
      expect(await banner.innerText()).toMatch(/^Plane-wide halt since .* by ops-alice: provider outage\. Every tenant's admissions are refused .*running runs answer Withheld/);
    } finally {
      expect((await api('POST', '/v1/plane/halt/lift', server.keys.operator, {})).status).toBe(200);
    }
    await page.reload();
    await page.locator('section.plane').getByRole('heading', { level: 2, name: 'The plane: every tenant' }).waitFor();
    expect(await page.locator('section.plane .plane-halt').count()).toBe(0);
  });

  it('shows the plane view: totals, plane-wide ceilings and this instance\'s refusals per minute per tenant', async () => {
    expect((await api('PUT', '/v1/plane/ceiling', server.keys.operator, { maxConcurrentRuns: 3, agents: { 'support-bot': { maxConcurrentRuns: 1 } } })).status).toBe(200);
    // acme is at its concurrency ceiling: three admissions refused now.
    for (const run of ['run-refused-1', 'run-refused-2', 'run-refused-3']) expect((await api('POST', '/v1/runs', server.keys.runner, { run, budget: REFUSED_BUDGET })).status).toBe(429);
    await signIn(server.keys.operator);
    const plane = page.locator('section.plane');
    await plane.getByRole('heading', { level: 2, name: 'The plane: every tenant' }).waitFor();
    const totals = plane.locator('dl.totals');
    expect(await totals.innerText()).toMatch(/Running runs\s+2 runs/);
    expect(await totals.innerText()).toMatch(/Settled today \(UTC\)\s+\$1\.14/);
    expect(await totals.innerText()).toContain('on monthly periods book by month only');
    expect(await plane.locator('.meter').first().innerText()).toMatch(/Runs across every tenant\s+2 runs of 3 runs/);
    const agent = plane.locator('.meter').filter({ hasText: 'Agent support-bot' });
    expect(await agent.innerText()).toMatch(/1 run of 1 run\s*at ceiling/);
    expect(await agent.getAttribute('class')).toContain('level-danger');
    const acme = plane.locator('table.refusals tbody tr').filter({ hasText: 'acme' });
    expect(await acme.locator('td[data-label="Last hour"]').innerText()).toBe('3');
    expect(await acme.locator('td[data-label="Last 5 min"]').innerText()).toBe('3');
    expect(await plane.getByText(/Counted by this server instance since it started at .* in memory only/).count()).toBe(1);
    await page.setViewportSize({ width: 1200, height: 900 });
    await plane.screenshot({ path: join(SHOTS, 'plane-view.png') });
    await page.screenshot({ path: join(SHOTS, 'overview-plane.png'), fullPage: true });
    expect((await api('PUT', '/v1/plane/ceiling', server.keys.operator, {})).status).toBe(200);
  });

  it('colours a meter by danger (warning from 80 %, danger at the ceiling), in words too, with held striped apart from settled', async () => {
    await signIn(server.keys.operator);
    const hooli = rowOf('hooli');
    await hooli.waitFor();
    const money = hooli.locator('td[data-label="Money this period"] .meter');
    expect(await money.getAttribute('class')).toContain('level-warn');
    expect(await money.innerText()).toMatch(/\$0\.00 settled \+ \$0\.\d\d held of \$1\.00\s*warning: \d\d% of ceiling/);
    const running = rowOf('acme').locator('td[data-label="Running"] .meter');
    expect(await running.getAttribute('class')).toContain('level-danger');
    const initech = rowOf('initech').locator('td[data-label="Money this period"] .meter');
    expect(await initech.getAttribute('class')).toContain('level-ok');
    // Settled and held stay two shapes in the warning colour: solid and striped.
    const colours = await money.evaluate((element) => {
      const style = (globalThis as unknown as { getComputedStyle: (e: unknown) => { backgroundColor: string; backgroundImage: string } }).getComputedStyle;
      const settled = style(element.querySelector('.bar-settled')!);
      const held = style(element.querySelector('.bar-held')!);
      return { settled: settled.backgroundColor, held: held.backgroundImage };
    });
    expect(colours.settled).toBe('rgb(217, 119, 6)');
    expect(colours.held).toContain('repeating-linear-gradient');
    expect(await page.locator('.meter-key').innerText()).toMatch(/from 80 % of a ceiling.*from 100 %/);
    await page.locator('table.tenants').screenshot({ path: join(SHOTS, 'danger-colours.png') });
  });

  it('releases every stranded run of a tenant in one act, after one confirmation of how many and what they hold', async () => {
    await signIn(server.keys.operator);
    await openTenant('hooli');
    await page.getByRole('button', { name: 'Release all 2 stranded runs…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Release all 2 stranded runs?' });
    expect(await confirm.innerText()).toMatch(/2 stranded runs of hooli hold 88,000 tokens and \$0\.88 between them/);
    expect(await confirm.locator('tbody tr').allInnerTexts()).toEqual([expect.stringContaining('run-h-1'), expect.stringContaining('run-h-2')]);
    await confirm.screenshot({ path: join(SHOTS, 'bulk-release-confirm.png') });
    await confirm.getByRole('button', { name: 'Release 2 runs' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText('Released 2 of 2 stranded runs of hooli.').waitFor();
    await page.getByText('No run is running, stranded or withheld.').waitFor();
    const released = page.locator('table.audit tbody tr').filter({ has: page.locator('td[data-label="Action"]', { hasText: /^run\.release$/ }) });
    await released.nth(1).waitFor();
    expect(await released.locator('td[data-label="Subject"]').allInnerTexts()).toEqual(expect.arrayContaining(['run-h-1', 'run-h-2']));
    expect(await released.first().locator('td[data-label="Who"]').innerText()).toBe('ops-alice (authenticated)');
  });

  it('takes money in currency units, exactly, and names the field when an amount is wrong', async () => {
    await signIn(server.keys.operator);
    await openTenant('globex');
    await page.getByRole('button', { name: 'Edit quota…' }).click();
    const field = page.getByLabel('Money per period ceiling (USD, e.g. 25.00)');
    // The stored 2,000,000 micro-USD is shown as the operator would type it.
    expect(await field.inputValue()).toBe('2');
    await field.fill('2.5000001');
    await page.getByRole('button', { name: 'Review the new quota…' }).click();
    const problem = page.locator('#quota-problem');
    expect(await problem.innerText()).toMatch(/maxMinorUnitsPerPeriod has more decimals than the minor unit allows \(at most 6/);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('dialog').count()).toBe(0);
    await field.fill('$1,234.567891');
    await page.getByRole('button', { name: 'Review the new quota…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Replace the quota?' });
    expect(await confirm.locator('tbody').innerText()).toMatch(/Money per period ceiling\s+\$2\.00 \(2,000,000 minor units[^)]*\)\)\s+\$1,234\.57 \(1,234,567,891 minor units/);
    await confirm.getByRole('button', { name: 'Replace quota' }).click();
    await page.getByText('Quota replaced; it applies to the next admission.').waitFor();
    const stored = (await (await api('GET', '/v1/tenants/globex/quota', server.keys.operator)).json()) as { quota: { maxMinorUnitsPerPeriod?: number } };
    expect(stored.quota.maxMinorUnitsPerPeriod).toBe(1_234_567_891);
    await page.locator('section[aria-labelledby="quota-title"]').screenshot({ path: join(SHOTS, 'currency-entry.png') });
  });

  it('edits rate ceilings as rows (add, remove), and names the row and field that is wrong', async () => {
    await signIn(server.keys.operator);
    await openTenant('acme');
    await page.getByRole('button', { name: 'Edit quota…' }).click();
    const rows = page.locator('fieldset.rate-rows .rate-row');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().getByLabel('Grant').inputValue()).toBe('tool://payments/refund');
    expect(await rows.first().getByLabel('Limit (dispatches)').inputValue()).toBe('5');
    expect(await rows.first().getByLabel('Window (seconds)').inputValue()).toBe('600');
    await page.getByRole('button', { name: 'Add a rate ceiling' }).click();
    const added = rows.nth(2);
    await added.getByLabel('Grant').fill('tool://email/send');
    await added.getByLabel('Limit (dispatches)').fill('10');
    await added.getByLabel('Window (seconds)').fill('1 min');
    await page.getByRole('button', { name: 'Review the new quota…' }).click();
    expect(await page.locator('#quota-problem').innerText()).toMatch(/rateCeilings row 3: Window \(seconds\) must be a whole number, got "1 min"/);
    expect(await added.getByLabel('Window (seconds)').getAttribute('aria-invalid')).toBe('true');
    await added.getByLabel('Window (seconds)').fill('60');
    // The daily refund ceiling goes.
    await page.getByRole('button', { name: 'Remove rate ceiling row 2' }).click();
    await page.locator('section[aria-labelledby="quota-title"]').screenshot({ path: join(SHOTS, 'rate-form.png') });
    await page.getByRole('button', { name: 'Review the new quota…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Replace the quota?' });
    expect(await confirm.locator('tbody').innerText()).toMatch(/Rate ceilings\s+tool:\/\/payments\/refund: 5 per 600 s, 100 per 86400 s\s+tool:\/\/payments\/refund: 5 per 600 s; tool:\/\/email\/send: 10 per 60 s/);
    await confirm.getByRole('button', { name: 'Replace quota' }).click();
    await page.getByText('Quota replaced; it applies to the next admission.').waitFor();
    const stored = (await (await api('GET', '/v1/tenants/acme/quota', server.keys.operator)).json()) as { quota: { rateCeilings?: unknown } };
    expect(stored.quota.rateCeilings).toEqual({
      'tool://payments/refund': [{ count: 5, windowSeconds: 600 }],
      'tool://email/send': [{ count: 10, windowSeconds: 60 }],
    });
  });

  it('E7: shows each ceiling\'s alert thresholds (amount, crossed or not, where from) and colours the spend bars by the highest crossed one', async () => {
    await signIn(server.keys.operator);
    await openTenant('wonka');
    const section = page.locator('section[aria-labelledby="alerts"]');
    const rowFor = (name: RegExp) => section.locator('table.alerts tbody tr').filter({ has: page.getByRole('rowheader', { name }) });
    // Tenant thresholds 50 % and 90 % of each ceiling; settled money $0.70 of $1.00 crosses 50 % only.
    expect(await rowFor(/^Tenant, money/).innerText()).toMatch(/\$0\.70[\s\S]*crossed 50% \(\$0\.50\)[\s\S]*not crossed 90% \(\$0\.90\)[\s\S]*the tenant's quota/);
    expect(await rowFor(/^Tenant, tokens/).innerText()).toMatch(/46,000 tokens[\s\S]*not crossed 50% \(50,000 tokens\)[\s\S]*not crossed 90% \(90,000 tokens\)/);
    expect(await rowFor(new RegExp(`^Agent ${WONKA_AGENT}, tokens`)).innerText()).toMatch(/6,000 tokens[\s\S]*crossed 5,000 tokens[\s\S]*the agent's own/);
    // The bars: amber by the highest crossed threshold, said in words; none crossed stays plain.
    const period = page.locator('section[aria-labelledby="this-period"]');
    const tenantMoney = period.locator('.meters').first().locator('.meter').filter({ hasText: 'Money' });
    expect(await tenantMoney.getAttribute('class')).toContain('level-warn');
    expect(await tenantMoney.innerText()).toMatch(/\$0\.70 of \$1\.00\s*alert: 50% \(\$0\.50\) crossed/);
    expect(await period.locator('.meters').first().locator('.meter').filter({ hasText: 'Tokens' }).getAttribute('class')).toContain('level-ok');
    const agentTokens = period.getByRole('group', { name: `Agent ${WONKA_AGENT}` }).locator('.meter').filter({ hasText: 'Tokens' });
    expect(await agentTokens.getAttribute('class')).toContain('level-warn');
    expect(await agentTokens.innerText()).toMatch(/6,000 tokens of 10,000 tokens\s*alert: 5,000 tokens crossed/);
    await section.screenshot({ path: join(SHOTS, 'alerts.png') });
    await period.screenshot({ path: join(SHOTS, 'alerts-meters.png') });

    // The form: a mistake names the field and the box, and nothing is sent.
    await page.getByRole('button', { name: 'Edit alert thresholds…' }).click();
    expect(await page.getByLabel('These thresholds:').isChecked()).toBe(true);
    const first = page.getByLabel('Threshold 1', { exact: true });
    expect(await first.inputValue()).toBe('50');
    await first.fill('half');
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    expect(await page.locator('#thresholds-problem').innerText()).toMatch(/alertThresholds\[0\]\.percent must be a whole number of at least 1, got "half"/);
    expect(await first.getAttribute('aria-invalid')).toBe('true');
    // An amount the form cannot send exactly is its own mistake too.
    await first.fill('60');
    await page.getByRole('button', { name: 'Remove threshold 2' }).click();
    await page.getByRole('button', { name: 'Add a threshold' }).click();
    await page.getByLabel('Unit, threshold 2').selectOption('tokens');
    await page.getByLabel('Threshold 2', { exact: true }).fill('99999999999999999999');
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    expect(await page.locator('#thresholds-problem').innerText()).toMatch(/alertThresholds\[1\]\.tokens is larger than the largest amount/);
    // A refusal of the API names its field as well: seventeen thresholds, one more than a quota takes.
    await page.getByLabel('Threshold 2', { exact: true }).fill('1000');
    for (let n = 3; n <= 17; n += 1) {
      await page.getByRole('button', { name: 'Add a threshold' }).click();
      await page.getByLabel(`Threshold ${n}`, { exact: true }).fill(String(n));
    }
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    const refused = page.locator('#thresholds-problem');
    await refused.filter({ hasText: /16/ }).waitFor();
    expect(await refused.innerText()).toMatch(/^alertThresholds .*16/);
    await page.locator('section[aria-labelledby="alerts"]').screenshot({ path: join(SHOTS, 'alerts-form-error.png') });
    const unchanged = (await (await api('GET', '/v1/tenants/wonka/quota', server.keys.operator)).json()) as { quota: { alertThresholds?: unknown } };
    expect(unchanged.quota.alertThresholds).toEqual([{ percent: 50 }, { percent: 90 }]);

    // 60 % and $0.65: both crossed at once (E5); the bar names the higher.
    for (let n = 17; n >= 3; n -= 1) await page.getByRole('button', { name: `Remove threshold ${n}` }).click();
    await page.getByLabel('Unit, threshold 2').selectOption('minorUnits');
    await page.getByLabel('Threshold 2', { exact: true }).fill('0.65');
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    await page.getByText('Alert thresholds saved.').waitFor();
    const stored = (await (await api('GET', '/v1/tenants/wonka/quota', server.keys.operator)).json()) as { quota: { alertThresholds?: unknown; agents?: unknown } };
    expect(stored.quota.alertThresholds).toEqual([{ percent: 60 }, { minorUnits: 650_000 }]);
    // A merge patch: the agent's ceiling and threshold are kept.
    expect(stored.quota.agents).toEqual({ [WONKA_AGENT]: { maxTokensPerPeriod: 10_000, alertThresholds: [{ tokens: 5_000 }] } });
    await tenantMoney.filter({ hasText: 'alert: $0.65 crossed' }).waitFor();
    expect(await rowFor(/^Tenant, money/).innerText()).toMatch(/crossed 60% \(\$0\.60\)[\s\S]*crossed \$0\.65/);

    // None at all ([]): the money bar is plain again, and the table says where the agent's come from.
    await page.getByRole('button', { name: 'Edit alert thresholds…' }).click();
    await page.getByLabel('No alerts ([])').check();
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    await page.getByText('Alert thresholds set: none (no spend alert).').waitFor();
    await tenantMoney.and(page.locator('.level-ok')).waitFor();
    expect(await rowFor(/^Tenant, money/).count()).toBe(0);
    expect(await page.getByText('none: no spend alert.').count()).toBe(1);

    // Back to the default (null removes them): 80 % and 100 %, from the built-in default.
    await page.getByRole('button', { name: 'Edit alert thresholds…' }).click();
    await page.getByLabel('Use the default (the plane-wide default, else 80 % and 100 %)').check();
    await page.getByRole('button', { name: 'Save alert thresholds' }).click();
    await page.getByText('Alert thresholds removed: the tenant uses the default again.').waitFor();
    await rowFor(/^Tenant, money/).filter({ hasText: 'the built-in default (80 % and 100 %)' }).waitFor();
    expect(await rowFor(/^Tenant, money/).innerText()).toMatch(/not crossed 80% \(\$0\.80\)[\s\S]*not crossed 100% \(\$1\.00\)/);
    const removed = (await (await api('GET', '/v1/tenants/wonka/quota', server.keys.operator)).json()) as { quota: Record<string, unknown> };
    expect(removed.quota).not.toHaveProperty('alertThresholds');

    // Narrow, laid out afresh: nothing sticks out, every threshold cell labelled.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await section.locator('table.alerts tbody tr').first().waitFor();
    expect(await page.evaluate<string[]>(STICKING_OUT)).toEqual([]);
    await section.screenshot({ path: join(SHOTS, 'alerts-narrow.png') });
    await period.screenshot({ path: join(SHOTS, 'alerts-meters-narrow.png') });
  });

  it('E8: lists the tenant\'s newest events, newest first, and the plane\'s in the plane view; a new one appears at the next refresh, once', async () => {
    await signIn(server.keys.operator);
    // The plane view: every tenant's events and the plane's.
    const planeEvents = page.locator('section.plane table.events tbody tr');
    await planeEvents.first().waitFor();
    const planeTexts = await planeEvents.allInnerTexts();
    expect(planeTexts.some((text) => /umbrella\s+halt\.set\s+Halt on tenant thrown by ops-bob: billing dispute/.test(text))).toBe(true);
    expect(planeTexts.some((text) => /hooli\s+run\.stranded\s+Run run-h-\d pass 1 stranded: its lease lapsed at/.test(text))).toBe(true);
    await page.setViewportSize({ width: 1200, height: 900 });
    await page.locator('section.plane').screenshot({ path: join(SHOTS, 'plane-events.png') });

    await openTenant('wonka');
    const events = page.locator('section[aria-labelledby="events"] table.events tbody tr');
    await events.first().waitFor();
    const texts = await events.allInnerTexts();
    expect(texts.some((text) => new RegExp(`run\\.overran\\s+Run run-w-1 pass 1 of agent ${WONKA_AGENT} overran its hold by 1,600 tokens: settled 6,000 tokens, \\$0\\.30, held 4,400 tokens, \\$0\\.44\\.`).test(text))).toBe(true);
    expect(texts.some((text) => new RegExp(`threshold\\.crossed\\s+Settled tokens of agent ${WONKA_AGENT} reached 5,000 tokens: 6,000 tokens settled in \\d{4}-\\d\\d\\.`).test(text))).toBe(true);
    expect(texts.some((text) => /threshold\.crossed\s+Settled money reached 50% of \$1\.00: \$0\.70 settled/.test(text))).toBe(true);
    // Only wonka's.
    expect(texts.every((text) => !/hooli|umbrella/.test(text))).toBe(true);
    // Newest first.
    const times = await events.locator('td[data-label="When"] time').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('datetime') ?? ''));
    expect([...times].sort().reverse()).toEqual(times);

    // An event written now shows at the top at the next refresh, without a reload, and only once.
    expect((await api('POST', '/v1/tenants/wonka/halts', server.keys.operator, { scope: 'agent:scribe', reason: 'E8 refresh check' })).status).toBe(200);
    const fresh = events.filter({ hasText: 'E8 refresh check' });
    await fresh.first().waitFor({ timeout: 30_000 });
    expect(await events.first().innerText()).toMatch(/halt\.set\s+Halt on agent:scribe thrown by ops-alice: E8 refresh check/);
    await page.locator('p.freshness', { hasText: 'Read at' }).waitFor();
    const readAt = await page.locator('p.freshness').innerText();
    await page.locator('p.freshness', { hasNotText: readAt }).filter({ hasText: 'Read at' }).waitFor({ timeout: 30_000 });
    expect(await fresh.count()).toBe(1);
    expect(await events.count()).toBeLessThanOrEqual(20);
    await page.locator('section[aria-labelledby="events"]').screenshot({ path: join(SHOTS, 'tenant-events.png') });
    // Narrow, laid out afresh (a chart drawn wide redraws only after a resize settles).
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await events.first().waitFor();
    expect(await page.evaluate<string[]>(STICKING_OUT)).toEqual([]);
    await page.locator('section[aria-labelledby="events"]').screenshot({ path: join(SHOTS, 'tenant-events-narrow.png') });
    expect((await api('POST', '/v1/tenants/wonka/halts/lift', server.keys.operator, { scope: 'agent:scribe' })).status).toBe(200);
  });

  it('falls back to 80 % and 100 % of settled and held spend on the tenant page when the alert thresholds cannot be read, and says so', async () => {
    // wonka's $0.70 settled against a ceiling of $0.80: 87 %.
    expect((await api('PATCH', '/v1/tenants/wonka/quota', server.keys.operator, { maxMinorUnitsPerPeriod: 800_000 })).status).toBe(200);
    try {
      await signIn(server.keys.operator);
      await page.route('**/v1/tenants/wonka/alerts', (route) => route.fulfill({ status: 503, contentType: 'application/problem+json', body: JSON.stringify({ code: 'STORE_UNAVAILABLE', detail: 'the store is down' }) }));
      await openTenant('wonka');
      const money = page.locator('section[aria-labelledby="this-period"] .meters').first().locator('.meter').filter({ hasText: 'Money' });
      expect(await money.getAttribute('class')).toContain('level-warn');
      expect(await money.innerText()).toMatch(/\$0\.70 of \$0\.80\s*warning: 87% of ceiling/);
      expect(await page.locator('section[aria-labelledby="this-period"]').innerText()).toContain('the alert thresholds could not be read');
      expect(await page.locator('section[aria-labelledby="alerts"]').getByRole('alert').innerText()).toBe('The alert thresholds could not be read: the store is down');
    } finally {
      expect((await api('PATCH', '/v1/tenants/wonka/quota', server.keys.operator, { maxMinorUnitsPerPeriod: 1_000_000 })).status).toBe(200);
    }
  });

  it('keeps the agent ceilings and alert thresholds when the quota form replaces the quota', async () => {
    await signIn(server.keys.operator);
    await openTenant('wonka');
    const before = (await (await api('GET', '/v1/tenants/wonka/quota', server.keys.operator)).json()) as { quota: Record<string, unknown> };
    await page.getByRole('button', { name: 'Edit quota…' }).click();
    await page.getByLabel('Tokens per period ceiling (tokens)').fill('120000');
    await page.getByRole('button', { name: 'Review the new quota…' }).click();
    await page.getByRole('dialog', { name: 'Replace the quota?' }).getByRole('button', { name: 'Replace quota' }).click();
    await page.getByText('Quota replaced; it applies to the next admission.').waitFor();
    const after = (await (await api('GET', '/v1/tenants/wonka/quota', server.keys.operator)).json()) as { quota: Record<string, unknown> };
    expect(after.quota).toEqual({ ...before.quota, maxTokensPerPeriod: 120_000 });
    expect(after.quota.agents).toEqual({ [WONKA_AGENT]: { maxTokensPerPeriod: 10_000, alertThresholds: [{ tokens: 5_000 }] } });
  });
});

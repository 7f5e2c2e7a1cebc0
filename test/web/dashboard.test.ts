import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { launchChromium } from './browser.js';
import { type DashboardServer, HOSTILE_AGENT, startDashboardServer } from './dashboard-server.js';

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
});

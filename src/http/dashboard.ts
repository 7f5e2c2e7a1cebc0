import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * How the dashboard shows money. Amounts are stored in the deployment's minor
 * unit (docs/concepts/glossary.md, spend); the dashboard divides by `minorUnitsPerUnit` and formats the
 * result as `currency`. Default {@link DEFAULT_MONEY_DISPLAY}: micro-USD (1 000 000 minor units
 * to the dollar).
 * - `currency`: an ISO 4217 code, three capital letters (`USD`, `EUR`);
 * - `minorUnitsPerUnit`: a power of ten from 1 to 10^12.
 */
export interface MoneyDisplay {
  readonly currency: string;
  readonly minorUnitsPerUnit: number;
}

/** Micro-USD: the minor unit docs/concepts/glossary.md names as the default (spend). */
export const DEFAULT_MONEY_DISPLAY: MoneyDisplay = Object.freeze({ currency: 'USD', minorUnitsPerUnit: 1_000_000 });

/** How often the dashboard re-reads what it shows, ms. */
export const DASHBOARD_REFRESH_MS = 5000;

/** Where `npm run build` writes the dashboard's assets: `dist/web/` at the package root. */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

/**
 * Options of the dashboard: `assetsDir`, the directory of built assets (default
 * {@link DEFAULT_DASHBOARD_DIR}), and `money`, how amounts are shown (default {@link DEFAULT_MONEY_DISPLAY}).
 */
export interface DashboardOptions {
  readonly assetsDir?: string | undefined;
  readonly money?: MoneyDisplay | undefined;
}

/**
 * The policy every dashboard answer carries: scripts, styles and requests from this origin only,
 * nothing inline, no framing, no plugins, no base rewriting, no form posts elsewhere.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  // Small files with fixed names: ask every time, so an upgrade is never half old, half new.
  'cache-control': 'no-cache',
} as const;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Checks a money display, throwing an `Error` that names the bad member and says what is accepted. */
export function requireMoneyDisplay(money: MoneyDisplay): MoneyDisplay {
  if (!/^[A-Z]{3}$/.test(money.currency)) {
    throw new Error(`currency must be an ISO 4217 code of three capital letters, such as USD, got ${JSON.stringify(money.currency)}`);
  }
  const exponent = Math.log10(money.minorUnitsPerUnit);
  if (!Number.isInteger(money.minorUnitsPerUnit) || !Number.isInteger(exponent) || exponent < 0 || exponent > 12) {
    throw new Error(`minorUnitsPerUnit must be a power of ten from 1 to 1000000000000, got ${String(money.minorUnitsPerUnit)}`);
  }
  return money;
}

/**
 * Serves the operator dashboard at `/ui/`: the built files of `assetsDir`, read
 * once when the app is built and kept in memory (a request path only ever selects one of them, so
 * nothing outside that directory can be reached), each with {@link DASHBOARD_CSP} and the other
 * security headers; `/ui/config.json` tells the page how to show money and how often to refresh.
 * `/ui` redirects to `/ui/` so the page's relative paths resolve. The page signs in by sending an
 * operator key as a bearer header to `POST /v1/session` and then uses the session cookie on `/v1`
 * (routes/session.ts), so these routes themselves are public. When the assets
 * were not built, `/ui/` says to run `npm run build`.
 */
export function registerDashboard(app: FastifyInstance, options: DashboardOptions = {}): void {
  const money = requireMoneyDisplay(options.money ?? DEFAULT_MONEY_DISPLAY);
  const files = readAssets(options.assetsDir ?? DEFAULT_DASHBOARD_DIR);
  files.set('config.json', {
    type: 'application/json; charset=utf-8',
    body: Buffer.from(JSON.stringify({ currency: money.currency, minorUnitsPerUnit: money.minorUnitsPerUnit, refreshMs: DASHBOARD_REFRESH_MS })),
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    if (path === '/ui') return reply.redirect('/ui/', 308);
    const name = (request.params as { '*'?: string })['*'] || 'index.html';
    const file = files.get(name);
    reply.headers(SECURITY_HEADERS);
    if (file === undefined) {
      const built = files.has('index.html');
      return reply
        .code(404)
        .type('text/plain; charset=utf-8')
        .send(built ? 'no such dashboard file\n' : 'the dashboard was not built: run `npm run build` in the quotaplane package\n');
    }
    return reply.type(file.type).send(file.body);
  };
  // With the router's ignoreTrailingSlash, `/ui` also answers `/ui/`; the wildcard answers the files.
  app.get('/ui', { schema: { hide: true } }, handler);
  app.get('/ui/*', { schema: { hide: true } }, handler);
}

function readAssets(dir: string): Map<string, { type: string; body: Buffer }> {
  const files = new Map<string, { type: string; body: Buffer }>();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[extname(name)];
    const path = join(dir, name);
    if (type === undefined || !statSync(path).isFile()) continue;
    files.set(name, { type, body: readFileSync(path) });
  }
  return files;
}

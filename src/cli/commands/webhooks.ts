import { type Command, Option } from 'commander';

import { EVENT_TYPES } from '../../core/events.js';
import { isQuotaError } from '../../core/errors.js';
import { instant } from '../../core/instant.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../core/webhook-retry.js';
import { createWebhooks, DEFAULT_ROTATION_OVERLAP_MS, MAX_DELIVERY_PAGE, type WebhookAdmin, type WebhookEndpointView } from '../../plane/webhooks.js';
import { redactStoreUrl } from '../../store/store-url.js';
import type { SetExitStatus } from '../command-output.js';
import { outputFor } from '../command-output.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import { type CliIo, writeLine } from '../io.js';
import { renderTable } from '../operator/format.js';
import { inCliTerms } from '../operator/new-tenant.js';
import { chooseTarget, KEY_ENV, URL_ENV } from '../operator/target-choice.js';
import { AGE_EXPECTED, ageWithUnit, wholeNumberBetween } from '../options.js';
import { STORE_ENV, type Environment } from '../serve/serve-config.js';
import { UsageError } from '../usage-error.js';

interface TargetFlags {
  store?: string;
  url?: string;
  key?: string;
  json: boolean;
}

interface AddFlags extends TargetFlags {
  tenant?: string;
  plane: boolean;
  endpoint: string;
  eventType?: string[];
}

/**
 * Registers `quotaplane webhooks add|list|remove|rotate|deliveries|resend` (docs/guides/webhooks.md,
 * docs/design/rules.md#h1–#h13): webhook endpoints and their deliveries, on a store (`--store`) or
 * through a server (`--url`/`--key` with an operator key). `add` and `rotate` print the signing
 * secret once. Every verb takes `--json`. `env` is where `QUOTAPLANE_STORE`, `QUOTAPLANE_URL` and
 * `QUOTAPLANE_KEY` are read (default `process.env`).
 */
export function registerWebhooks(program: Command, io: CliIo, setExitStatus: SetExitStatus, options: { env?: Environment } = {}): void {
  const env = options.env ?? process.env;
  const webhooks = program
    .command('webhooks')
    .summary('add, list, rotate and remove webhook endpoints; list and resend their deliveries')
    .description(
      'Webhook endpoints receive events (spend thresholds, ceilings, overruns, stranded runs, halts) as signed ' +
        'Standard Webhooks POSTs, retried with backoff for about a day. An endpoint is a tenant\'s (--tenant) or ' +
        "the whole plane's (--plane). Each verb works on a store (--store) or through a running server " +
        '(--url with an operator --key). See docs/guides/webhooks.md.',
    )
    .configureOutput(outputFor(io, 'quotaplane webhooks --help'));

  const verb = (name: string, summary: string): Command =>
    webhooks
      .command(name)
      .summary(summary)
      .addOption(new Option('--store <url>', `a store: sqlite:<path>, <path>.db or postgres://… (default: $${STORE_ENV})`))
      .addOption(new Option('--url <url>', `through a running quotaplane serve instead (default: $${URL_ENV})`))
      .addOption(new Option('--key <key>', `with --url: an operator key (default: $${KEY_ENV})`))
      .addOption(new Option('--json', 'print one JSON document').default(false))
      .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
      .configureOutput(outputFor(io, `quotaplane webhooks ${name} --help`));

  const print = (flags: TargetFlags, json: unknown, text: () => void): void => {
    if (flags.json) io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    else text();
  };

  verb('add', 'add an endpoint; it receives events from now on, signed with the secret printed once')
    .option('--tenant <tenant>', "the tenant whose events it receives")
    .option('--plane', "receive every tenant's events and the plane's (instead of --tenant)", false)
    .requiredOption('--endpoint <url>', 'the http:// or https:// URL the events are POSTed to')
    .addOption(new Option('--event-type <type...>', 'only these event types (default: all)').choices([...EVENT_TYPES]))
    .action(async (flags: AddFlags) => {
      if ((flags.tenant === undefined) === !flags.plane) throw new UsageError('give --tenant <tenant> or --plane (every tenant and the plane), one of them');
      await withWebhooks(flags, env, async (admin) => {
        const issued = await admin.add({ tenant: flags.plane ? null : flags.tenant!, url: flags.endpoint, eventTypes: flags.eventType ?? null });
        print(flags, issued, () => {
          writeLine(io.stdout, `added ${issued.endpoint.id}: ${describeEndpoint(issued.endpoint)}`);
          writeSecret(io, issued.secret);
        });
      });
      setExitStatus(EXIT.OK);
    });

  verb('list', 'list the endpoints (never their secrets)')
    .option('--tenant <tenant>', 'only the endpoints of this tenant')
    .action(async (flags: TargetFlags & { tenant?: string }) => {
      await withWebhooks(flags, env, async (admin) => {
        const listed = await admin.list(flags.tenant);
        print(flags, { webhooks: listed }, () => {
          if (listed.length === 0) {
            writeLine(io.stdout, "no webhook endpoints; add one with 'quotaplane webhooks add'");
            return;
          }
          io.stdout.write(
            renderTable(
              ['ID', 'TENANT', 'URL', 'EVENTS', 'SECRETS', 'CREATED'],
              listed.map((endpoint) => [
                endpoint.id,
                endpoint.tenant ?? '(plane)',
                endpoint.url,
                endpoint.eventTypes?.join(',') ?? 'all',
                String(endpoint.secrets.length),
                instant(endpoint.createdAtMs),
              ]),
            ),
          );
        });
      });
      setExitStatus(EXIT.OK);
    });

  verb('remove', 'remove an endpoint and its deliveries')
    .argument('<id>', 'the endpoint id (wh_…), as webhooks list shows it')
    .action(async (id: string, flags: TargetFlags) => {
      await withWebhooks(flags, env, async (admin) => {
        await admin.remove(id);
        print(flags, { id, removed: true }, () => writeLine(io.stdout, `removed ${id}`));
      });
      setExitStatus(EXIT.OK);
    });

  verb('rotate', 'add a new signing secret, printed once; the current ones keep signing for --overlap')
    .argument('<id>', 'the endpoint id (wh_…)')
    .addOption(
      new Option('--overlap <age>', `how long the current secrets keep signing: ${AGE_EXPECTED}, or 0 to end them now (default: 24h)`).argParser((value: string) =>
        value.trim() === '0' ? 0 : ageWithUnit(value),
      ),
    )
    .action(async (id: string, flags: TargetFlags & { overlap?: number }) => {
      await withWebhooks(flags, env, async (admin) => {
        const issued = await admin.rotate(id, flags.overlap ?? DEFAULT_ROTATION_OVERLAP_MS);
        print(flags, issued, () => {
          const ends = issued.endpoint.secrets.map((secret) => secret.expiresAtMs).filter((at): at is number => at !== null);
          writeLine(io.stdout, `rotated ${id}: ${ends.length === 0 ? 'the old secrets no longer sign' : `the old secrets sign until ${instant(Math.max(...ends))}`}`);
          writeSecret(io, issued.secret);
        });
      });
      setExitStatus(EXIT.OK);
    });

  verb('deliveries', "list an endpoint's deliveries, newest event first")
    .argument('<id>', 'the endpoint id (wh_…)')
    .addOption(new Option('--status <status>', 'only deliveries in this status').choices([...DELIVERY_STATUSES]))
    .addOption(new Option('--limit <n>', `at most this many, 1 to ${MAX_DELIVERY_PAGE}`).argParser(wholeNumberBetween(1, MAX_DELIVERY_PAGE)).default(100))
    .action(async (id: string, flags: TargetFlags & { status?: DeliveryStatus; limit: number }) => {
      await withWebhooks(flags, env, async (admin) => {
        const listed = await admin.deliveries(id, { status: flags.status, limit: flags.limit });
        print(flags, { deliveries: listed }, () => {
          if (listed.length === 0) {
            writeLine(io.stdout, `no deliveries${flags.status === undefined ? '' : ` ${flags.status}`} for ${id}`);
            return;
          }
          io.stdout.write(
            renderTable(
              ['ID', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST RESULT', 'NEXT ATTEMPT'],
              listed.map((delivery) => [
                delivery.id,
                delivery.event.id,
                delivery.event.type,
                delivery.status,
                String(delivery.attempts),
                delivery.lastResult ?? '',
                delivery.status === 'pending' ? instant(delivery.dueAtMs) : '',
              ]),
            ),
          );
        });
      });
      setExitStatus(EXIT.OK);
    });

  verb('resend', 'make a failed (or delivered) delivery due now again, under the same webhook-id')
    .argument('<delivery>', 'the delivery id (wh_….<seq>), as webhooks deliveries shows it')
    .action(async (id: string, flags: TargetFlags) => {
      await withWebhooks(flags, env, async (admin) => {
        const delivery = await admin.resend(id);
        print(flags, delivery, () => writeLine(io.stdout, `resent ${id}: due now, as event ${delivery.event.id}`));
      });
      setExitStatus(EXIT.OK);
    });
}

// The webhook acts of the target: through a server, or on an existing store.
async function withWebhooks(flags: TargetFlags, env: Environment, body: (admin: WebhookAdmin) => Promise<void>): Promise<void> {
  const choice = chooseTarget(flags, env);
  if (choice.kind === 'server') {
    const { createClient } = await import('../../client/create-client.js');
    let client;
    try {
      client = createClient({ url: choice.url, key: choice.key });
    } catch (error) {
      if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--${error.details.field === 'key' ? 'key' : 'url'}: ${error.message}`);
      throw error;
    }
    await body(client.webhooks).catch((error: unknown) => {
      throw inCliTerms(error, `server ${client.url}`);
    });
    return;
  }
  const { openExistingStore } = await import('../open-existing-store.js');
  const store = await openExistingStore(choice.url);
  try {
    await body(createWebhooks({ store }));
  } catch (error) {
    throw inCliTerms(error, `store ${redactStoreUrl(choice.url)}`);
  } finally {
    await store.close();
  }
}

function describeEndpoint(endpoint: WebhookEndpointView): string {
  const whose = endpoint.tenant === null ? "every tenant's events and the plane's" : `tenant '${endpoint.tenant}'`;
  return `${whose}, ${endpoint.eventTypes === null ? 'every event type' : endpoint.eventTypes.join(', ')}, to ${endpoint.url}`;
}

function writeSecret(io: CliIo, secret: string): void {
  writeLine(io.stdout, 'The signing secret is shown only this once: store it where your receiver verifies deliveries.');
  writeLine(io.stdout);
  writeLine(io.stdout, `    ${secret}`);
  writeLine(io.stdout);
}

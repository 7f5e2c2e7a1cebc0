import { STORE_ENV } from '../serve/serve-config.js';
import { UsageError } from '../usage-error.js';
/** The environment variable naming a server's base URL when neither `--store` nor `--url` is given. */
export const URL_ENV = 'QUOTAPLANE_URL';
/** The environment variable holding the API key when `--key` is absent. */
export const KEY_ENV = 'QUOTAPLANE_KEY';

/** Where an operator command acts: a store it opens itself, or a running `quotaplane serve`. */
export type TargetChoice =
  | { readonly kind: 'store'; readonly url: string }
  | { readonly kind: 'server'; readonly url: string; readonly key: string };

/** The flags that choose the target; `actor` only matters for the checks. */
export interface TargetChoiceFlags {
  readonly store?: string | undefined;
  readonly url?: string | undefined;
  readonly key?: string | undefined;
  readonly actor?: string | undefined;
}

const given = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * Chooses the target of an operator command, flags first, then the environment:
 * - `--store URL` → that store; `--url URL` → that server, with `--key` or `$QUOTAPLANE_KEY`;
 * - neither flag: `$QUOTAPLANE_STORE` or `$QUOTAPLANE_URL`, whichever is set.
 * Usage errors (status 2), each naming the flags: `--store` with `--url`, both variables set and
 * no flag to choose, neither set, a server without a key, `--key` on a store, and `--actor` on a
 * server (the server records the key's name, `authenticated`; an asserted name has no place there).
 * Pure: the caller passes the environment.
 */
export function chooseTarget(flags: TargetChoiceFlags, env: Readonly<Record<string, string | undefined>>): TargetChoice {
  if (given(flags.store) && given(flags.url)) {
    throw new UsageError('give --store (act on a store) or --url (act through a server), not both');
  }
  let kind: 'store' | 'server';
  let url: string;
  if (given(flags.store)) [kind, url] = ['store', flags.store];
  else if (given(flags.url)) [kind, url] = ['server', flags.url];
  else if (given(env[STORE_ENV]) && given(env[URL_ENV])) {
    throw new UsageError(`both $${STORE_ENV} and $${URL_ENV} are set: choose with --store <url> or --url <url>`);
  } else if (given(env[STORE_ENV])) [kind, url] = ['store', env[STORE_ENV]];
  else if (given(env[URL_ENV])) [kind, url] = ['server', env[URL_ENV]];
  else {
    throw new UsageError(
      `name the store with --store <url> (or $${STORE_ENV}): sqlite:<path>, <path>.db or postgres://…; ` +
        `or a server with --url <url> --key <key> (or $${URL_ENV}, $${KEY_ENV})`,
    );
  }

  if (kind === 'store') {
    if (given(flags.key)) throw new UsageError('--key goes with --url (a server); on a store, name who acts with --actor');
    return { kind, url };
  }
  if (flags.actor !== undefined) {
    throw new UsageError("--actor goes with --store; through a server the key's name is recorded (authenticated): drop --actor");
  }
  const key = given(flags.key) ? flags.key : env[KEY_ENV];
  if (!given(key)) throw new UsageError(`--url needs --key <key> (or $${KEY_ENV}): an operator key from 'quotaplane keys create'`);
  return { kind, url, key };
}

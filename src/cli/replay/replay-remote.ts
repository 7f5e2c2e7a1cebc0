import { ulid } from 'ulid';

import { createClient } from '../../client/create-client.js';
import type { OpenedReplayTarget } from './replay-store.js';

/**
 * A replay target on a running `quotaplane serve`: the replay drives a client
 * of the server instead of a plane on a store, with the same invariants, read through the same
 * client. Tenant names get the prefix `replay-<ULID>-`, as on any shared store.
 *
 * The key must be an operator key for every tenant (`keys create --tenant '*' --role operator`):
 * the replay sets a quota per tenant (an operator act), spreads rows over many tenants (a runner
 * key acts for one), and drives time from the trace (only operator keys may send `atMs`).
 * Throws `INVALID_ARGUMENT` naming `url` or `key` when one is malformed.
 */
export function openRemoteReplayTarget(url: string, key: string): OpenedReplayTarget {
  const client = createClient({ url, key });
  return {
    target: { remote: client, url: client.url, temporary: false, kept: true, tenantPrefix: `replay-${ulid()}-` },
    async close() {},
  };
}

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import { haltScopeKey, type Halt, type HaltScope } from '../../core/halt-scope.js';
import type { Operator } from '../../core/operator.js';
import { ACME, OPS_ALICE, OPS_CAROL } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Halts through the port's setHalt, liftHalt, liftHaltIf and halts (docs/design/rules.md#c20–#c30).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

/** The instant the halt cases throw at, 1 700 000 000 s, in ms. */
const HALT_AT_MS = 1_700_000_000_000;
const TENANT: HaltScope = { kind: 'tenant' };
const CLERK: HaltScope = { kind: 'agent', name: 'payments-clerk' };
const REVISION: HaltScope = {
  kind: 'revision',
  digest: createHash('sha256').update('a manifest revision', 'utf8').digest('hex'),
};

const halt = (scope: HaltScope, reason: string, by: Operator = OPS_ALICE, atMs = HALT_AT_MS): Halt => ({
  scope,
  reason,
  by,
  atMs,
});

const keys = (halts: readonly Halt[]) => halts.map((h) => haltScopeKey(h.scope));

/** C20–C27: one row per scope; a re-throw replaces; lifting one scope leaves the others. */
export const haltsPerScope: ConformanceGroup = {
  title: 'halts are independent rows per scope',
  steps: [
    {
      id: 'C20',
      title: 'a fresh tenant has no halts',
      async run(context) {
        assert.deepEqual(await acme(context).halts(), []);
      },
    },
    {
      id: 'C21',
      title: 'a thrown tenant halt reads back with its reason, operator and instant',
      async run(context) {
        const handle = acme(context);
        await handle.setHalt(halt(TENANT, 'incident 42'));
        assert.deepEqual(await handle.halts(), [halt(TENANT, 'incident 42')]);
      },
    },
    {
      id: 'C22',
      title: 'throwing the same scope again replaces the row rather than adding one',
      async run(context) {
        const handle = acme(context);
        await handle.setHalt(halt(TENANT, 'incident 43'));
        assert.deepEqual(await handle.halts(), [halt(TENANT, 'incident 43')]);
      },
    },
    {
      id: 'C23',
      title: 'tenant, agent and revision halts stand side by side, listed in byte order of their keys',
      async run(context) {
        const handle = acme(context);
        await handle.setHalt(halt(CLERK, 'agent 12 is looping'));
        await handle.setHalt(halt(REVISION, 'bad deploy'));
        const halts = await handle.halts();
        // Byte order: 'agent:…' < 'revision:…' < 'tenant'.
        assert.deepEqual(halts, [
          halt(CLERK, 'agent 12 is looping'),
          halt(REVISION, 'bad deploy'),
          halt(TENANT, 'incident 43'),
        ]);
        assert.deepEqual(keys(halts), [haltScopeKey(CLERK), haltScopeKey(REVISION), 'tenant']);
      },
    },
    {
      id: 'C24',
      title: 'lifting the agent halt leaves the tenant halt standing',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.liftHalt(CLERK), true, 'liftHalt(agent) answers that one stood');
        assert.deepEqual(await handle.halts(), [halt(REVISION, 'bad deploy'), halt(TENANT, 'incident 43')]);
      },
    },
    {
      id: 'C25',
      title: 'lifting the tenant and revision halts leaves none',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.liftHalt(TENANT), true, 'liftHalt(tenant)');
        assert.equal(await handle.liftHalt(REVISION), true, 'liftHalt(revision)');
        assert.deepEqual(await handle.halts(), []);
      },
    },
    {
      id: 'C26',
      title: 'lifting a scope nobody halted answers false and is no error',
      async run(context) {
        assert.equal(await acme(context).liftHalt(TENANT), false);
      },
    },
    {
      id: 'C27',
      title: 'an authenticated operator and the instant read back exactly as thrown',
      async run(context) {
        const handle = acme(context);
        const thrown = halt(TENANT, 'incident 44', OPS_CAROL);
        await handle.setHalt(thrown);
        const [read, ...rest] = await handle.halts();
        assert.deepEqual(rest, [], 'one halt stands');
        assert.deepEqual(read?.by, OPS_CAROL, 'operator');
        assert.equal(read?.atMs, HALT_AT_MS, 'instant');
        assert.deepEqual(read, thrown);
      },
    },
  ],
};

const CONDITIONAL: HaltScope = { kind: 'agent', name: 'conditional-lift' };
const FIRST = halt(CONDITIONAL, 'incident 46', { actor: 'ops-erin', basis: 'authenticated' }, 1_700_000_100_000);
const SECOND = halt(CONDITIONAL, 'incident 46', { actor: 'ops-frank', basis: 'authenticated' }, 1_700_000_160_000);

/** C28–C30: `liftHaltIf` removes a halt only while it is still the one the lifter read. */
export const conditionalLift: ConformanceGroup = {
  title: 'a conditional lift removes only the halt it read',
  steps: [
    {
      id: 'C28',
      title: 'a halt re-thrown after it was read is not lifted by the stale read',
      async run(context) {
        const handle = acme(context);
        await handle.setHalt(FIRST);
        const read = (await handle.halts()).find((h) => haltScopeKey(h.scope) === haltScopeKey(CONDITIONAL));
        if (read === undefined) assert.fail('the first throw does not read back');
        assert.deepEqual(read, FIRST, 'the first throw reads back');
        await handle.setHalt(SECOND);
        assert.equal(await handle.liftHaltIf(read), false, 'liftHaltIf(first) after the re-throw');
        assert.deepEqual(await handle.halts(), [SECOND], 'the row names frank');
        // Every field of the standing halt is compared, not only the operator.
        assert.equal(await handle.liftHaltIf({ ...SECOND, reason: 'incident 47' }), false, 'another reason');
        assert.equal(
          await handle.liftHaltIf({ ...SECOND, by: { actor: 'ops-frank', basis: 'asserted' } }),
          false,
          'another basis',
        );
        assert.equal(await handle.liftHaltIf({ ...SECOND, atMs: SECOND.atMs + 1000 }), false, 'another instant');
        assert.deepEqual(await handle.halts(), [SECOND], 'still standing');
      },
    },
    {
      id: 'C29',
      title: 'a conditional lift of the halt as it stands removes it',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.liftHaltIf(SECOND), true, 'liftHaltIf(second)');
        assert.deepEqual(await handle.halts(), [], 'the scope reads absent');
      },
    },
    {
      id: 'C30',
      title: 'a second conditional lift of the same halt answers false',
      async run(context) {
        assert.equal(await acme(context).liftHaltIf(SECOND), false);
      },
    },
  ],
};

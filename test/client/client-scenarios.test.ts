import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';

import { createClient, type PlaneVerbs } from '../../src/client/create-client.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { injectFetch, serviceFixture, type ServiceFixture } from '../http/http-fixtures.js';
import { PLANE_SCENARIOS, T0, type PlaneScenario } from './plane-scenarios.js';

// The same plane scenarios run three ways: on `createPlane`, and on a client of
// `buildApp`, once through `app.inject` and once through a real listening port. The answers must
// be the same values, answer by answer.

type Transcript = { label: string; value: unknown }[];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function onPlane(scenario: PlaneScenario): Promise<Transcript> {
  const store: QuotaStore = await openStore('sqlite::memory:');
  cleanups.push(() => store.close());
  return transcriptOf(scenario, createPlane({ store, clock: new ManualClock(T0) }));
}

async function onClient(scenario: PlaneScenario, transport: 'inject' | 'port'): Promise<Transcript> {
  const fixture: ServiceFixture = await serviceFixture();
  cleanups.push(() => fixture.close());
  if (transport === 'inject') {
    return transcriptOf(scenario, createClient({ url: 'http://quotaplane.test', key: fixture.key.opAll.secret, fetch: injectFetch(fixture.app) }));
  }
  await fixture.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = fixture.app.server.address() as AddressInfo;
  return transcriptOf(scenario, createClient({ url: `http://127.0.0.1:${port}`, key: fixture.key.opAll.secret }));
}

async function transcriptOf(scenario: PlaneScenario, plane: PlaneVerbs): Promise<Transcript> {
  const transcript: Transcript = [];
  await scenario.run(plane, (label, value) => transcript.push({ label, value: JSON.parse(JSON.stringify(value)) as unknown }));
  return transcript;
}

describe('plane scenarios, run on the plane and through the HTTP client', () => {
  for (const scenario of PLANE_SCENARIOS) {
    describe(scenario.name, () => {
      it('on createPlane', async () => {
        expect((await onPlane(scenario)).length).toBeGreaterThan(0);
      });
      it('through the client over app.inject, with the same answers as the plane', async () => {
        expect(await onClient(scenario, 'inject')).toEqual(await onPlane(scenario));
      });
      it('through the client over a real port on 127.0.0.1, with the same answers as the plane', async () => {
        expect(await onClient(scenario, 'port')).toEqual(await onPlane(scenario));
      });
    });
  }
});

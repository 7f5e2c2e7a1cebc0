import { afterEach, describe, expect, it } from 'vitest';

import { AI_SDK_SCENARIOS } from './ai-sdk-scenarios.js';
import { clientTarget, planeTarget, type Target } from './run-fixtures.js';

// Each scenario runs with the AI SDK's own mock model on the in-process
// plane and through the HTTP client of the service, and leaves the same books.

const targets: Target[] = [];
afterEach(async () => {
  for (const target of targets.splice(0)) await target.close();
});

async function on(kind: 'plane' | 'client'): Promise<Target> {
  const target = kind === 'plane' ? await planeTarget() : await clientTarget();
  targets.push(target);
  return target;
}

describe('quotaplane/ai-sdk with MockLanguageModelV3', () => {
  for (const scenario of AI_SDK_SCENARIOS) {
    describe(scenario.name, () => {
      it('on createPlane', async () => {
        expect(await scenario.run((await on('plane')).plane)).toBeDefined();
      });
      it('through the HTTP client, with the same books', async () => {
        const overHttp = await scenario.run((await on('client')).plane);
        expect(overHttp).toEqual(await scenario.run((await on('plane')).plane));
      });
    });
  }
});

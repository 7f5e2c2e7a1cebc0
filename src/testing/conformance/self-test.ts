import assert from 'node:assert/strict';

import { alwaysAdmitRateStore } from '../always-admit-rate-store.js';
import { rateGroupsTheSelfTestBreaks } from './rate.js';
import { EarlierStepFailed, runConformanceGroup } from './run-group.js';
import type { ConformanceGroup, StoreFactory } from './types.js';

// The step of each group that must be the first to fail against a counter that admits everything:
// the first step that expects a refusal. Failing earlier, or only later, would mean the group
// fails for some other reason than the missing counter.
const FIRST_FAILURE: Readonly<Record<string, string>> = {
  'a full window refuses': 'C32',
  'a window boundary does not double the ceiling': 'C35',
  'two runs making the same call each count': 'C34',
};

/**
 * C43: the battery can tell a real rate counter from one that admits everything
 * (docs/design/rules.md#c43).
 */
export const batterySelfTest: ConformanceGroup = {
  title: 'the battery catches a rate counter that admits everything',
  steps: [
    {
      id: 'C43',
      title: 'three rate groups fail against a store whose reserveRate and rateRoom always answer ok',
      async run(context) {
        const broken: StoreFactory = async () => {
          const opened = await context.open();
          return { store: alwaysAdmitRateStore(opened.store), close: () => opened.close() };
        };
        for (const group of rateGroupsTheSelfTestBreaks) {
          const unwrapped = await runConformanceGroup(group, context.open);
          const unwrappedFailure = unwrapped.find((result) => 'error' in result);
          assert.equal(
            unwrappedFailure,
            undefined,
            `"${group.title}" must pass on the real store before its failure on the wrapper means anything`,
          );
          const results = await runConformanceGroup(group, broken);
          const failed = results.filter((result) => 'error' in result && !(result.error instanceof EarlierStepFailed));
          assert.deepEqual(
            failed.map((result) => result.id),
            [FIRST_FAILURE[group.title]],
            `"${group.title}" against the always-admit wrapper: the steps that failed`,
          );
        }
      },
    },
  ],
};

import { afterAll, beforeAll, describe, it } from 'vitest';

import { conformanceGroups } from './conformance/groups.js';
import { EarlierStepFailed } from './conformance/run-group.js';
import type { ConformanceGroup, OpenedStore, StoreFactory } from './conformance/types.js';
import { validatedFactory } from './conformance/validated-factory.js';

/** Options of {@link describeConformance}. */
export interface DescribeConformanceOptions {
  /** The groups to register; default every group of the battery (`conformanceGroups`). */
  readonly groups?: readonly ConformanceGroup[];
}

/**
 * Registers the store conformance battery with vitest: one `describe` named after `backendName`,
 * inside it one `describe` per group and one `it` per step, named `${id} ${title}` (for example
 * `C11 a hold that does not fit refuses with SpentOut and takes no slot`). Each group opens a
 * fresh store with `factory`, wrapped in `validated()` so the cases run against the port with its
 * input rules (an adapter need not check its own arguments), before its first step and closes it
 * after its last (the factory's
 * `close` must tolerate a store a step already closed); its steps run in order on that store. A
 * step after a failed one fails too, naming the step that failed first, rather than run on state
 * it cannot trust.
 *
 * @example
 * describeConformance('sqlite in memory', async () => {
 *   const store = await openStore('sqlite::memory:');
 *   return { store, close: () => store.close() };
 * });
 */
export function describeConformance(backendName: string, givenFactory: StoreFactory, options: DescribeConformanceOptions = {}): void {
  const groups = options.groups ?? conformanceGroups;
  const factory = validatedFactory(givenFactory);
  describe(`${backendName} conformance`, () => {
    for (const group of groups) {
      describe(group.title, () => {
        let opened: OpenedStore | null = null;
        let firstFailure: string | null = null;
        beforeAll(async () => {
          opened = await factory();
        });
        afterAll(async () => {
          await opened?.close();
        });
        for (const step of group.steps) {
          it(`${step.id} ${step.title}`, async () => {
            if (firstFailure !== null) throw new EarlierStepFailed(firstFailure);
            if (opened === null) throw new Error('the store factory did not open a store for this group');
            try {
              await step.run({ store: opened.store, open: factory });
            } catch (error) {
              firstFailure = step.id;
              throw error;
            }
          });
        }
      });
    }
  });
}

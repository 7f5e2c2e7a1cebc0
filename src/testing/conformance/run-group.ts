import type { ConformanceGroup, StepResult, StoreFactory } from './types.js';
import { validatedFactory } from './validated-factory.js';

/**
 * The error a step reports when an earlier step of its group failed. Steps continue one another's
 * state, so a later step on a store left wrong would fail for a reason that is not its own; it
 * fails with this instead, naming the step to look at first.
 */
export class EarlierStepFailed extends Error {
  override readonly name = 'EarlierStepFailed';
  /** The id of the first failing step of the group. */
  readonly failedStep: string;

  constructor(failedStep: string) {
    super(`not run: step ${failedStep} of this group failed first, and this step builds on its state`);
    this.failedStep = failedStep;
  }
}

/**
 * Runs one group without a test framework: opens a fresh store with `factory` (wrapped in
 * `validated()`, see validated-factory.ts), runs the steps in
 * order on it, and closes it. A step that throws is recorded with its error; every step after the
 * first failure is recorded as {@link EarlierStepFailed}. Resolves with one result per step; rejects
 * only when the factory or the store's disposal fails.
 */
export async function runConformanceGroup(group: ConformanceGroup, givenFactory: StoreFactory): Promise<StepResult[]> {
  const factory = validatedFactory(givenFactory);
  const opened = await factory();
  const results: StepResult[] = [];
  let firstFailure: string | null = null;
  try {
    for (const step of group.steps) {
      if (firstFailure !== null) {
        results.push({ id: step.id, title: step.title, error: new EarlierStepFailed(firstFailure) });
        continue;
      }
      try {
        await step.run({ store: opened.store, open: factory });
        results.push({ id: step.id, title: step.title });
      } catch (error) {
        firstFailure = step.id;
        results.push({ id: step.id, title: step.title, error });
      }
    }
  } finally {
    await opened.close();
  }
  return results;
}

/**
 * Runs every group in turn, each on its own fresh store (see {@link runConformanceGroup}), and
 * resolves with the results per group title. For harnesses other than vitest; vitest users call
 * `describeConformance` from `quotaplane/testing/vitest`.
 */
export async function runConformance(
  groups: readonly ConformanceGroup[],
  factory: StoreFactory,
): Promise<{ group: string; results: StepResult[] }[]> {
  const report: { group: string; results: StepResult[] }[] = [];
  for (const group of groups) report.push({ group: group.title, results: await runConformanceGroup(group, factory) });
  return report;
}

import type { QuotaStore } from '../../store/store.js';

/**
 * A store opened for one group of the conformance suite: the store, and how to dispose of it
 * (close connections, delete a temp file or schema). `close` is called once per group after its
 * last step, also when a step closed the store itself, so it must tolerate an already-closed store.
 */
export interface OpenedStore {
  readonly store: QuotaStore;
  close(): Promise<void>;
}

/** Opens a fresh, empty store for one group. Each call must return a store that shares no rows with any other. */
export type StoreFactory = () => Promise<OpenedStore>;

/**
 * What a step sees: the group's store (fresh when the group began, then shared by its steps in
 * order) and the factory, for the few steps that need stores of their own (the battery self-test, C43).
 */
export interface ConformanceContext {
  readonly store: QuotaStore;
  readonly open: StoreFactory;
}

/**
 * One acceptance case: `id` is its case id in docs/design/rules.md (`C11`, `G3`, `L7`),
 * `title` says the behaviour in one sentence. `run` throws (an `AssertionError` or the store's own
 * error) when the backend does not behave so, and resolves otherwise.
 */
export interface ConformanceStep {
  readonly id: string;
  readonly title: string;
  run(context: ConformanceContext): Promise<void>;
}

/**
 * A sequence of steps sharing one fresh store: later steps build on what earlier ones wrote
 * (the C cases continue one another), so they must run in order and never alone.
 */
export interface ConformanceGroup {
  readonly title: string;
  readonly steps: readonly ConformanceStep[];
}

/** The outcome of one step when a group is run without a test framework; `error` is absent when it passed. */
export interface StepResult {
  readonly id: string;
  readonly title: string;
  readonly error?: unknown;
}

/**
 * `quotaplane/testing`: what a backend, the plane and their tests need to prove behaviour — the
 * store conformance battery (framework-neutral), a manual clock, and the broken store the battery
 * tests itself against. Vitest users register the battery with `describeConformance` from
 * `quotaplane/testing/vitest`, kept apart so this entry point never imports a test framework.
 */
export { alwaysAdmitRateStore } from './always-admit-rate-store.js';
export { assertOk, assertRefused, assertRejectsWith } from './conformance/assertions.js';
export { conformanceGroups } from './conformance/groups.js';
export {
  assertRefusedWithoutWrites,
  countedDispatches,
  snapshotTenant,
  type TenantSnapshot,
  type WriteProbe,
} from './conformance/no-writes.js';
export { EarlierStepFailed, runConformance, runConformanceGroup } from './conformance/run-group.js';
export type {
  ConformanceContext,
  ConformanceGroup,
  ConformanceStep,
  OpenedStore,
  StepResult,
  StoreFactory,
} from './conformance/types.js';
export { ManualClock } from './manual-clock.js';
export type { Clock } from '../core/clock.js';

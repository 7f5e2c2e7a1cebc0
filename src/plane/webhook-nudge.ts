import type { Plane } from './plane.js';

/**
 * The plane's verbs whose decisions may write an event (docs/design/rules.md#e3–#e6): a settle
 * (thresholds, a ceiling reached, an overrun), a quota or plane ceiling set (thresholds already
 * crossed), halts thrown and lifted, the sweep (a stranded run), a release and a tenant's deletion.
 */
export const EVENT_WRITING_VERBS = [
  'settle',
  'setQuota',
  'updateQuota',
  'setPlaneCeiling',
  'updatePlaneCeiling',
  'halt',
  'lift',
  'haltPlane',
  'liftPlaneHalt',
  'sweep',
  'release',
  'deleteTenant',
] as const satisfies readonly (keyof Plane)[];

/**
 * `plane` with `nudge` called once each of its {@link EVENT_WRITING_VERBS} has answered (or thrown),
 * so an in-process webhook dispatcher starts a round at once instead of at its next poll
 * (docs/design/rules.md#h6). Every other member is `plane`'s own.
 */
export function nudgingPlane(plane: Plane, nudge: () => void): Plane {
  const wrapped: Record<string, unknown> = { ...plane };
  for (const verb of EVENT_WRITING_VERBS) {
    const call = plane[verb] as (...args: unknown[]) => Promise<unknown>;
    wrapped[verb] = async (...args: unknown[]) => {
      try {
        return await call.apply(plane, args);
      } finally {
        nudge();
      }
    };
  }
  return wrapped as unknown as Plane;
}

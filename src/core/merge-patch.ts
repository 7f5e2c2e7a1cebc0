/**
 * The members of one level of a JSON Merge Patch (RFC 7396) that change anything, as
 * `[name, value]` pairs in the patch's own order: every own enumerable member except those whose
 * value is `undefined`. A member given as `undefined` is absent, as JSON would carry it, so it keeps
 * the current value: read as a removal, `{ maxTokensPerPeriod: maybeLimit }` would silently lift a
 * ceiling (fail open). `null` is kept: it removes. Pure. Used by `applyQuotaPatch` and
 * `applyPlanePatch` at every level they merge.
 */
export function patchMembers(changes: object): [string, unknown][] {
  return Object.entries(changes).filter(([, value]) => value !== undefined);
}

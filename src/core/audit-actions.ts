/**
 * The actions quotaplane itself records in a tenant's audit log (docs/design/decisions.md "Lifting
 * is journaled first, and everything an operator does is audited"), one list for every layer that
 * names them: the plane types the rows it appends with {@link AuditAction}, and the CLI's
 * `audit --action` takes exactly these. The log itself stores any identifier a library user appends
 * (`appendAudit`), so reads by action over HTTP accept any identifier.
 *
 * - `halt`, `lift`: a halt thrown or lifted (the operator's, or the tenant's reserved chains).
 * - `quota.set`, `quota.update`: a tenant quota replaced or patched.
 * - `plane.set`, `plane.update`: the plane-wide ceiling replaced or patched (chain `quotaplane:plane`).
 * - `plane.halt`, `plane.lift`: the plane-wide halt thrown or lifted (chain `quotaplane:plane`).
 * - `run.release`, `run.settle`: an operator's release or settle of a run.
 * - `key.create`, `key.revoke`: an API key made or revoked (chain `quotaplane:keys`);
 *   `key.rotate`: an API key replaced by a new one (its `key.create` row follows), the old one
 *   expiring after the overlap.
 * - `run.prune`, `rate.prune`: closed runs or old dispatch rows removed by retention.
 * - `tenant.delete`: the tenant deleted, every record of it but this chain removed.
 * - `calls.set`: a tenant's model-call ceilings replaced or removed.
 * - `call.release`: an operator's release of a stuck model call.
 */
export const AUDIT_ACTIONS = Object.freeze([
  'halt',
  'lift',
  'quota.set',
  'quota.update',
  'plane.set',
  'plane.update',
  'plane.halt',
  'plane.lift',
  'run.release',
  'run.settle',
  'key.create',
  'key.revoke',
  'key.rotate',
  'run.prune',
  'rate.prune',
  'tenant.delete',
  'calls.set',
  'call.release',
] as const);

/** One of {@link AUDIT_ACTIONS}. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

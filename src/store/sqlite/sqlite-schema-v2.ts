/**
 * Version 2 of the SQLite schema: retention (issue 9 fault 6). A prune removes a closed run with
 * its passes and receipts and leaves one row here, so a decision about that run id that arrives
 * later (a settle retried after a lost answer, an admission under the same id) is refused with
 * `CONFLICT` instead of being applied as if the run were new. `closed_at_ms` is when the run
 * concluded or was released, `pruned_at_ms` when the prune removed it (Unix ms).
 */
export const SQLITE_SCHEMA_V2 = `
CREATE TABLE quota_pruned (
  tenant        TEXT    NOT NULL,
  run_id        TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('concluded', 'released')),
  last_epoch    INTEGER NOT NULL CHECK (last_epoch >= 1),
  closed_at_ms  INTEGER NOT NULL,
  pruned_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;
`;

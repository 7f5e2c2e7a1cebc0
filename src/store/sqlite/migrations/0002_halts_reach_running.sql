-- Version 2 of the SQLite schema: halts that reach running work, and the plane-wide halt
-- (docs/design/rules.md#c44–#c50).
--
-- reaches_running: 1 when a tenant, agent or revision halt was thrown to reach running work too
-- (the running runs it covers answer Withheld, as under a subject halt); 0, the default every halt
-- of version 1 keeps, when it stops new admissions only. A subject halt reaches running work
-- whatever the column says.
ALTER TABLE quota_halted ADD COLUMN reaches_running INTEGER NOT NULL DEFAULT 0 CHECK (reaches_running IN (0, 1));

-- The plane-wide halt: at most one row, over every tenant of the store. Thrown and lifted with
-- its audit row on the reserved chain quotaplane:plane, in one transaction.
CREATE TABLE quota_plane_halt (
  id               INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  reason           TEXT    NOT NULL,
  by_actor         TEXT    NOT NULL,
  by_basis         TEXT    NOT NULL,
  at_ms            INTEGER NOT NULL,
  reaches_running  INTEGER NOT NULL CHECK (reaches_running IN (0, 1))
) STRICT;

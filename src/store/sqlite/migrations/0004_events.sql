-- Version 4 of the SQLite schema: the plane's event log (docs/design/rules.md#e1–#e9). A decision
-- that causes an event (a spend threshold crossed, a ceiling reached, a pass that overran, a run
-- stranded, a halt thrown or lifted) writes it in its own transaction. `id` is derived from what
-- the event is about, and an event whose id is already here is not written again, so two instances,
-- a retry or a restart never write a second one. `seq` numbers the log in commit order (a SQLite
-- file has one writer at a time), so a reader asking for the events after the last it saw misses
-- none. It is the rowid without AUTOINCREMENT (which would write sqlite_sequence with every
-- event): the next rowid is one past the largest, and no event is ever deleted, so none is reused.
-- `tenant` is '' for an event of the plane as a whole (a plane-wide halt). `retired_by` is 0 for
-- the events of the tenant as it is, and the audit number of its deletion once deleted: the log
-- keeps them, and a tenant made again under the same name starts with no event fired. One index,
-- unique on (tenant, retired_by, event_key), both keeps a key (so an id, derived from it) once
-- and finds a tenant's events, so an event costs its row and one index entry; the key, unlike the
-- id's hash, keeps a tenant's events of one period side by side in it.
CREATE TABLE quota_events (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL,
  event_key  TEXT    NOT NULL,
  tenant     TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  at_ms      INTEGER NOT NULL,
  data_json  TEXT    NOT NULL,
  retired_by INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX quota_events_by_tenant ON quota_events (tenant, retired_by, event_key);

-- Version 4 of the PostgreSQL schema: the plane's event log (docs/design/rules.md#e1–#e9). A
-- decision that causes an event (a spend threshold crossed, a ceiling reached, a pass that overran,
-- a run stranded, a halt thrown or lifted) writes it in its own transaction. `id` is derived from
-- what the event is about, and an event whose id is already here is not written again, so two
-- instances, a retry or a restart never write a second one. `tenant` is '' for an event of the
-- plane as a whole (a plane-wide halt). `retired_by` is 0 for the events of the tenant as it is,
-- and the audit number of its deletion once deleted: the log keeps them, and a tenant made again
-- under the same name starts with no event fired. One index, unique on (tenant, retired_by,
-- event_key), both keeps a key (so an id, derived from it) once and finds a tenant's events, so an
-- event costs its row, its primary key and one index entry; the key, unlike the id's hash, keeps a
-- tenant's events of one period side by side in it.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_events (
  seq        BIGSERIAL PRIMARY KEY,
  id         TEXT COLLATE "C" NOT NULL,
  event_key  TEXT COLLATE "C" NOT NULL,
  tenant     TEXT COLLATE "C" NOT NULL,
  type       TEXT COLLATE "C" NOT NULL,
  at_ms      BIGINT NOT NULL,
  data_json  JSONB NOT NULL,
  retired_by BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX quota_events_by_tenant ON :QUOTAPLANE_SCHEMA.quota_events (tenant, retired_by, event_key);

-- quota_events_append(p_events): appends events given as [{id, event_key, tenant, type, at_ms,
-- data_json}], each unless its id is there already. (No NOTIFY: a notifying transaction takes a
-- database-wide lock at commit; readers poll the cursor, which is one indexed read.)
-- `seq` must increase in commit order, or a reader asking for the events after the last it saw
-- would miss one committed late under a lower number: so the transaction first takes the events
-- lock, held until it ends, and only then draws its numbers. Events are rare (crossings, not
-- decisions), so this serialises little; it is the last lock any transaction takes.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_events_append(p_events jsonb) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-events', 0));
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_events (id, event_key, tenant, type, at_ms, data_json)
    SELECT e.id, e.event_key, e.tenant, e.type, e.at_ms, e.data_json
      FROM jsonb_to_recordset(p_events) AS e(id text, event_key text, tenant text, type text, at_ms bigint, data_json jsonb)
    ON CONFLICT (tenant, retired_by, event_key) DO NOTHING;
END
$fn$;

-- quota_books_write as in version 2, and it appends the batch's events (`events`) last.
CREATE OR REPLACE FUNCTION :QUOTAPLANE_SCHEMA.quota_books_write(p_rows jsonb) RETURNS jsonb
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  k record;
BEGIN
  -- A write decided on rows kept from an earlier batch (`expect`): written only if, first, the
  -- plane ceiling's lock and each tenant's lock are free (tried, never waited for: a write that
  -- waited could stand on a ceiling or an instant gone stale meanwhile), each tenant's version is
  -- still the one those rows were read at, the plane ceiling is still the one they were decided
  -- under (`expectPlane`, as stored: null for none), the runs the decisions took to
  -- be new have no row in any table keyed by run (a hold or slot may stand without a registry row),
  -- and the dispatches they took to be new and refused are not recorded (`absentRates`; one they
  -- record is checked by its insert, the dispatch key being unique). Otherwise nothing of the batch
  -- is written and the answer is {"stale": true}: the caller decides it again under the locks.
  IF p_rows ? 'expect' THEN
    IF NOT pg_try_advisory_xact_lock_shared(hashtextextended(':QUOTAPLANE_SCHEMA.quota-plane-ceiling', 3)) THEN
      RETURN '{"stale": true}'::jsonb;
    END IF;
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'expect') AS x(tenant text, version bigint) LOOP
      IF NOT pg_try_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(k.tenant) || ':' || k.tenant, 0))
         OR NOT EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_book_versions v WHERE v.tenant = k.tenant AND v.version = k.version) THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
    END LOOP;
    IF coalesce((SELECT p.ceiling_json FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1), 'null'::jsonb)
       IS DISTINCT FROM coalesce(p_rows -> 'expectPlane', 'null'::jsonb) THEN
      RETURN '{"stale": true}'::jsonb;
    END IF;
    -- The plane-wide halt is checked as the ceiling is (`expectPlaneHalt`, as stored: null for
    -- none): it is thrown and lifted under the ceiling's lock, taken exclusively.
    IF coalesce((SELECT to_jsonb(h) - 'id' FROM :QUOTAPLANE_SCHEMA.quota_plane_halt h WHERE h.id = 1), 'null'::jsonb)
       IS DISTINCT FROM coalesce(p_rows -> 'expectPlaneHalt', 'null'::jsonb) THEN
      RETURN '{"stale": true}'::jsonb;
    END IF;
    FOR k IN SELECT * FROM jsonb_to_recordset(coalesce(p_rows -> 'absent', '[]'::jsonb)) AS x(tenant text, run_id text) LOOP
      IF EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_runs t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_pruned t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_running t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_reserved t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_passes t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_settled t WHERE t.tenant = k.tenant AND t.run_id = k.run_id) THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
    END LOOP;
    FOR k IN SELECT * FROM jsonb_to_recordset(coalesce(p_rows -> 'absentRates', '[]'::jsonb))
                      AS x(tenant text, grant_ref text, run_id text, dispatch text) LOOP
      IF EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_rate t WHERE t.tenant = k.tenant AND t.grant_ref = k.grant_ref
                    AND t.run_id = k.run_id AND t.dispatch = k.dispatch) THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
    END LOOP;
    -- Checked only (a batch that changed nothing: its refusals stand as of the versions read).
    IF coalesce((p_rows ->> 'readOnly')::boolean, false) THEN
      RETURN NULL;
    END IF;
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'expect') AS x(tenant text, version bigint) LOOP
      UPDATE :QUOTAPLANE_SCHEMA.quota_book_versions v SET version = v.version + 1 WHERE v.tenant = k.tenant;
    END LOOP;
  END IF;
  IF p_rows ? 'slotsGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'slotsGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_running t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'slots' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_running AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_running, coalesce(p_rows -> 'slots', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET admitted_at_ms = excluded.admitted_at_ms, agent_name = excluded.agent_name;
  END IF;
  IF p_rows ? 'holdsGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'holdsGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_reserved t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'holds' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_reserved AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_reserved, coalesce(p_rows -> 'holds', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET period = excluded.period, day = excluded.day, agent_name = excluded.agent_name,
        tokens = excluded.tokens, minor_units = excluded.minor_units;
  END IF;
  IF p_rows ? 'figures' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_figures AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_figures, coalesce(p_rows -> 'figures', '[]'::jsonb))
      ON CONFLICT (tenant) DO UPDATE SET running = excluded.running;
  END IF;
  IF p_rows ? 'agentFigures' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_agent_figures AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_agent_figures, coalesce(p_rows -> 'agentFigures', '[]'::jsonb))
      ON CONFLICT (tenant, agent_name) DO UPDATE SET running = excluded.running;
  END IF;
  IF p_rows ? 'spent' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_spent AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_spent, coalesce(p_rows -> 'spent', '[]'::jsonb))
      ON CONFLICT (tenant, period) DO UPDATE SET tokens = excluded.tokens, minor_units = excluded.minor_units,
        held_tokens = excluded.held_tokens, held_minor_units = excluded.held_minor_units;
  END IF;
  IF p_rows ? 'agentSpent' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_agent_spent AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_agent_spent, coalesce(p_rows -> 'agentSpent', '[]'::jsonb))
      ON CONFLICT (tenant, agent_name, period) DO UPDATE SET tokens = excluded.tokens, minor_units = excluded.minor_units,
        held_tokens = excluded.held_tokens, held_minor_units = excluded.held_minor_units;
  END IF;
  IF p_rows ? 'passesGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'passesGone') AS x(tenant text, run_id text, epoch bigint) LOOP
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_passes t WHERE t.tenant = k.tenant AND t.run_id = k.run_id AND t.epoch = k.epoch;
    END LOOP;
  END IF;
  IF p_rows ? 'runsGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'runsGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_runs t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'runs' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_runs AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_runs, coalesce(p_rows -> 'runs', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET status = excluded.status, agent_name = excluded.agent_name,
        agent_digest = excluded.agent_digest, chain_json = excluded.chain_json, budget_json = excluded.budget_json,
        width = excluded.width, admitted_at_ms = excluded.admitted_at_ms, last_epoch = excluded.last_epoch,
        status_since_ms = excluded.status_since_ms;
  END IF;
  IF p_rows ? 'passes' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_passes AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_passes, coalesce(p_rows -> 'passes', '[]'::jsonb))
      ON CONFLICT (tenant, run_id, epoch) DO UPDATE SET period = excluded.period, takes_slot = excluded.takes_slot,
        started_at_ms = excluded.started_at_ms, lease_expires_at_ms = excluded.lease_expires_at_ms,
        settled_at_ms = excluded.settled_at_ms, hold_tokens = excluded.hold_tokens, hold_minor_units = excluded.hold_minor_units,
        receipt_tokens = excluded.receipt_tokens, receipt_minor_units = excluded.receipt_minor_units,
        receipt_concludes = excluded.receipt_concludes;
  END IF;
  IF p_rows ? 'receipts' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_settled
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_settled, coalesce(p_rows -> 'receipts', '[]'::jsonb));
  END IF;
  IF p_rows ? 'ratePrunes' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'ratePrunes') AS x(tenant text, grant_ref text, floor_ms bigint) LOOP
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_rate t WHERE t.tenant = k.tenant AND t.grant_ref = k.grant_ref AND t.reserved_at_ms <= k.floor_ms;
    END LOOP;
  END IF;
  IF p_rows ? 'rates' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_rate
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_rate, coalesce(p_rows -> 'rates', '[]'::jsonb));
  END IF;
  IF p_rows ? 'rateGrants' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_rate_grants AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_rate_grants, coalesce(p_rows -> 'rateGrants', '[]'::jsonb))
      ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms;
  END IF;
  IF p_rows ? 'waitersGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'waitersGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_waiters t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'waiters' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_waiters AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_waiters, coalesce(p_rows -> 'waiters', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET seq = excluded.seq, state = excluded.state, request_json = excluded.request_json,
        enqueued_at_ms = excluded.enqueued_at_ms, wait_until_ms = excluded.wait_until_ms,
        lease_expires_at_ms = excluded.lease_expires_at_ms, decided_at_ms = excluded.decided_at_ms;
  END IF;
  IF p_rows ? 'turns' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_wait_turns AS t
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_wait_turns, coalesce(p_rows -> 'turns', '[]'::jsonb))
      ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
  END IF;
  IF p_rows ? 'notify' THEN
    PERFORM pg_notify('quotaplane_waiters', ':QUOTAPLANE_SCHEMA:' || n.tenant)
       FROM jsonb_array_elements_text(coalesce(p_rows -> 'notify', '[]'::jsonb)) AS n(tenant);
  END IF;
  IF p_rows ? 'audit' THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_audit
      SELECT * FROM jsonb_populate_recordset(NULL:::QUOTAPLANE_SCHEMA.quota_audit, coalesce(p_rows -> 'audit', '[]'::jsonb));
  END IF;
  -- Events last: the events lock is the last lock a transaction takes, so it waits on no one.
  IF p_rows ? 'events' THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_events_append(p_rows -> 'events');
  END IF;
  RETURN NULL;
END
$fn$;

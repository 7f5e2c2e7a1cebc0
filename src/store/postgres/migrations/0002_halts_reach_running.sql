-- Version 2 of the PostgreSQL schema: halts that reach running work, and the plane-wide halt
-- (docs/design/rules.md#c44–#c50).
--
-- quota_halted.reaches_running: true when a tenant, agent or revision halt was thrown to reach
-- running work too (the running runs it covers answer Withheld, as under a subject halt); false,
-- the default every halt of version 1 keeps, when it stops new admissions only. A subject halt
-- reaches running work whatever the column says.
ALTER TABLE :QUOTAPLANE_SCHEMA.quota_halted ADD COLUMN reaches_running BOOLEAN NOT NULL DEFAULT false;

-- The plane-wide halt: at most one row, over every tenant of the store. It is thrown and lifted
-- (with its audit row on the reserved chain quotaplane:plane) under the plane ceiling's lock,
-- taken exclusively (quota_set_plane_lock), as the ceiling is set; every batch reads it with the
-- ceiling under that lock shared, and a write decided on kept rows compares it as stored
-- (`expectPlaneHalt`), as it compares the ceiling, so no batch decides past a plane halt.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_plane_halt (
  id               INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  reason           TEXT NOT NULL,
  by_actor         TEXT NOT NULL,
  by_basis         TEXT NOT NULL,
  at_ms            BIGINT NOT NULL,
  reaches_running  BOOLEAN NOT NULL
);

-- quota_books_load as in version 1, but a halt's row carries reaches_running and the plane's
-- answer carries the plane-wide halt (`halt`: the row as stored, without its id; null for none).
CREATE OR REPLACE FUNCTION :QUOTAPLANE_SCHEMA.quota_books_load(p_want jsonb) RETURNS jsonb
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  v_key text;
  v_t jsonb;
  v_tenant text;
  v_runs text[];
  v_agents text[];
  v_periods text[];
  v_grants text[];
  v_tenants jsonb := '[]'::jsonb;
  v_store jsonb := '{}'::jsonb;
  v_versions jsonb := '{}'::jsonb;
BEGIN
  -- A batch that reads the plane ceiling holds its lock (shared) until it commits, so the ceiling
  -- cannot change under a decision made on it (quota_set_plane_lock takes it exclusively).
  IF coalesce((p_want ->> 'plane')::boolean, false) THEN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(':QUOTAPLANE_SCHEMA.quota-plane-ceiling', 3));
  END IF;
  FOR v_key IN SELECT jsonb_array_elements_text(coalesce(p_want -> 'lock', '[]'::jsonb)) LOOP
    v_versions := v_versions || jsonb_build_object(v_key, :QUOTAPLANE_SCHEMA.quota_tenant_lock(v_key));
  END LOOP;
  IF coalesce((p_want ->> 'planeLock')::boolean, false) THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-plane', 3));
  END IF;
  FOR v_key IN SELECT jsonb_array_elements_text(coalesce(p_want -> 'auditLock', '[]'::jsonb)) LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-audit:' || octet_length(v_key) || ':' || v_key, 3));
  END LOOP;

  FOR v_t IN SELECT jsonb_array_elements(coalesce(p_want -> 'tenants', '[]'::jsonb)) LOOP
    v_tenant := v_t ->> 'tenant';
    v_runs := ARRAY(SELECT jsonb_array_elements_text(coalesce(v_t -> 'runs', '[]'::jsonb)));
    v_agents := ARRAY(SELECT jsonb_array_elements_text(coalesce(v_t -> 'agents', '[]'::jsonb)));
    v_periods := ARRAY(SELECT jsonb_array_elements_text(coalesce(v_t -> 'periods', '[]'::jsonb)));
    v_grants := ARRAY(SELECT jsonb_array_elements_text(coalesce(v_t -> 'grants', '[]'::jsonb)));
    v_tenants := v_tenants || jsonb_build_array(jsonb_build_object(
      'tenant', v_tenant,
      'base', CASE WHEN coalesce((v_t ->> 'base')::boolean, false) THEN jsonb_build_object(
          'running', coalesce((SELECT f.running FROM :QUOTAPLANE_SCHEMA.quota_figures f WHERE f.tenant = v_tenant), 0),
          'quota', (SELECT q.quota_json FROM :QUOTAPLANE_SCHEMA.quota_tenants q WHERE q.tenant = v_tenant),
          'halts', (SELECT coalesce(jsonb_agg(jsonb_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
                                                                 'by_basis', h.by_basis, 'at_ms', h.at_ms,
                                                                 'reaches_running', h.reaches_running) ORDER BY h.scope), '[]'::jsonb)
                      FROM :QUOTAPLANE_SCHEMA.quota_halted h WHERE h.tenant = v_tenant),
          'waiting', EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = v_tenant AND w.state = 'waiting'),
          'granted', EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = v_tenant AND w.state = 'granted')) END,
      'queue', CASE WHEN coalesce((v_t ->> 'queue')::boolean, false) THEN
          (SELECT coalesce(jsonb_agg(to_jsonb(w) - 'tenant' ORDER BY w.seq), '[]'::jsonb) FROM :QUOTAPLANE_SCHEMA.quota_waiters w
            WHERE w.tenant = v_tenant) END,
      'runs', CASE WHEN cardinality(v_runs) > 0 THEN jsonb_build_object(
          'runs', (SELECT jsonb_agg(to_jsonb(r) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_runs r
                    WHERE r.tenant = v_tenant AND r.run_id = ANY (v_runs)),
          'pruned', (SELECT jsonb_agg(to_jsonb(x) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_pruned x
                      WHERE x.tenant = v_tenant AND x.run_id = ANY (v_runs)),
          'passes', (SELECT jsonb_agg(to_jsonb(p) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_passes p
                      WHERE p.tenant = v_tenant AND p.run_id = ANY (v_runs)),
          'settled', (SELECT jsonb_agg(to_jsonb(s) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_settled s
                       WHERE s.tenant = v_tenant AND s.run_id = ANY (v_runs)),
          'slots', (SELECT jsonb_agg(to_jsonb(o) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_running o
                     WHERE o.tenant = v_tenant AND o.run_id = ANY (v_runs)),
          'holds', (SELECT jsonb_agg(to_jsonb(h) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_reserved h
                     WHERE h.tenant = v_tenant AND h.run_id = ANY (v_runs))) END,
      'agents', CASE WHEN cardinality(v_agents) > 0 THEN
          (SELECT jsonb_agg(jsonb_build_object('agent_name', a.agent_name, 'running', a.running))
             FROM :QUOTAPLANE_SCHEMA.quota_agent_figures a WHERE a.tenant = v_tenant AND a.agent_name = ANY (v_agents)) END,
      'periods', CASE WHEN cardinality(v_periods) > 0 THEN
          (SELECT jsonb_agg(to_jsonb(s) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_spent s
            WHERE s.tenant = v_tenant AND s.period = ANY (v_periods)) END,
      'agentPeriods', CASE WHEN v_t ? 'agentPeriods' THEN (SELECT jsonb_agg(to_jsonb(s) - 'tenant')
          FROM jsonb_array_elements(v_t -> 'agentPeriods') AS k(pair),
          LATERAL (SELECT * FROM :QUOTAPLANE_SCHEMA.quota_agent_spent a
                    WHERE a.tenant = v_tenant AND a.agent_name = k.pair ->> 0 AND a.period = k.pair ->> 1) AS s) END,
      'grants', CASE WHEN cardinality(v_grants) > 0 THEN
          (SELECT jsonb_agg(to_jsonb(g) - 'tenant') FROM :QUOTAPLANE_SCHEMA.quota_rate_grants g
            WHERE g.tenant = v_tenant AND g.grant_ref = ANY (v_grants)) END,
      'rateKeys', CASE WHEN v_t ? 'rateKeys' THEN (SELECT jsonb_agg(k.triple || to_jsonb(q.reserved_at_ms))
          FROM jsonb_array_elements(v_t -> 'rateKeys') AS k(triple),
          LATERAL (SELECT r.reserved_at_ms FROM :QUOTAPLANE_SCHEMA.quota_rate r
                    WHERE r.tenant = v_tenant AND r.grant_ref = k.triple ->> 0 AND r.run_id = k.triple ->> 1
                      AND r.dispatch = k.triple ->> 2) AS q) END,
      'rateOrdinals', CASE WHEN v_t ? 'rateOrdinals' THEN (SELECT jsonb_agg(jsonb_build_array(k.pair -> 0, k.pair -> 1, q.reserved_at_ms))
          FROM jsonb_array_elements(v_t -> 'rateOrdinals') AS k(pair),
          LATERAL (SELECT r.reserved_at_ms FROM :QUOTAPLANE_SCHEMA.quota_rate r
                    WHERE r.tenant = v_tenant AND r.grant_ref = k.pair ->> 0 AND r.ordinal = (k.pair ->> 1)::bigint) AS q) END,
      'rateAfter', CASE WHEN v_t ? 'rateAfter' THEN (SELECT jsonb_agg(jsonb_build_array(k.pair -> 0, k.pair -> 1,
            (SELECT q.ordinal FROM :QUOTAPLANE_SCHEMA.quota_rate q
              WHERE q.tenant = v_tenant AND q.grant_ref = k.pair ->> 0 AND q.reserved_at_ms > (k.pair ->> 1)::bigint
              ORDER BY q.reserved_at_ms, q.ordinal LIMIT 1)))
          FROM jsonb_array_elements(v_t -> 'rateAfter') AS k(pair)) END,
      'audit', CASE WHEN coalesce((v_t ->> 'audit')::boolean, false) THEN jsonb_build_object('head',
          (SELECT jsonb_build_object('seq', a.seq, 'hash', a.hash) FROM :QUOTAPLANE_SCHEMA.quota_audit a
            WHERE a.tenant = v_tenant ORDER BY a.seq DESC LIMIT 1)) END));
  END LOOP;

  IF coalesce((p_want ->> 'plane')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('plane', jsonb_build_object('ceiling',
      (SELECT p.ceiling_json FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1),
      'halt', (SELECT to_jsonb(h) - 'id' FROM :QUOTAPLANE_SCHEMA.quota_plane_halt h WHERE h.id = 1)));
  END IF;
  IF coalesce((p_want ->> 'planeRunning')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('planeRunning', coalesce((SELECT sum(f.running) FROM :QUOTAPLANE_SCHEMA.quota_figures f), 0));
  END IF;
  IF jsonb_array_length(coalesce(p_want -> 'planeAgents', '[]'::jsonb)) > 0 THEN
    v_store := v_store || jsonb_build_object('planeAgents', (SELECT jsonb_object_agg(n.agent,
        coalesce((SELECT sum(a.running) FROM :QUOTAPLANE_SCHEMA.quota_agent_figures a WHERE a.agent_name = n.agent), 0))
      FROM jsonb_array_elements_text(p_want -> 'planeAgents') AS n(agent)));
  END IF;
  IF jsonb_array_length(coalesce(p_want -> 'turns', '[]'::jsonb)) > 0 THEN
    v_store := v_store || jsonb_build_object('turns', (SELECT jsonb_object_agg(t.tenant, t.vtime)
      FROM :QUOTAPLANE_SCHEMA.quota_wait_turns t WHERE t.tenant IN (SELECT jsonb_array_elements_text(p_want -> 'turns'))));
  END IF;
  IF coalesce((p_want ->> 'waitingTenants')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('waitingTenants', (SELECT coalesce(jsonb_agg(c.tenant ORDER BY c.tenant), '[]'::jsonb)
      FROM (SELECT DISTINCT w.tenant FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.state = 'waiting') AS c
     WHERE pg_try_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(c.tenant) || ':' || c.tenant, 0))));
    -- A tenant taken here may be written by this transaction: its version is raised too.
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_book_versions AS v (tenant, version)
      SELECT w.tenant, :QUOTAPLANE_SCHEMA.quota_clock_us() FROM jsonb_array_elements_text(v_store -> 'waitingTenants') AS w(tenant)
      ON CONFLICT (tenant) DO UPDATE SET version = greatest(v.version + 1, :QUOTAPLANE_SCHEMA.quota_clock_us());
  END IF;
  RETURN v_store || jsonb_build_object('tenants', v_tenants, 'versions', v_versions);
END
$fn$;

-- quota_books_write as in version 1, but a write decided on kept rows is also stale when the
-- plane-wide halt is not the one it was decided under (`expectPlaneHalt`).
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
  RETURN NULL;
END
$fn$;

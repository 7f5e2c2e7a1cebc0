-- Version 2: every decision is made by `core/` in TypeScript (postgres-tenant-books.ts), so the
-- server-side decision functions of version 1 and the checks they relied on (a stored quota or
-- plane ceiling readable in SQL) go; the stored JSON is validated where it is read, like any
-- input. Two functions take their place, neither holding a rule: quota_books_load takes the locks
-- it is asked for and answers the rows it is asked for; quota_books_write stores the rows a batch
-- changed, as the decisions computed them (counters included). Both are PL/pgSQL so that their
-- statements' plans are kept per connection, and both plan generically: every statement is a
-- lookup by key, and planning one anew on each call (a custom plan) cost more than running it. Waiting admissions keep their request as the JSON
-- the SQLite store keeps (the table is made anew: a waiter of version 1, whose caller polls it,
-- is dropped with it and its caller told the run is not waiting). `:QUOTAPLANE_SCHEMA` stands for
-- the quoted schema name.

ALTER TABLE :QUOTAPLANE_SCHEMA.quota_plane DROP CONSTRAINT quota_plane_json_ok;
ALTER TABLE :QUOTAPLANE_SCHEMA.quota_tenants DROP CONSTRAINT quota_tenants_quota_json_ok;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_batch;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_requeue_lapsed_grant;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_withdraw_grant;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_grant_waiters;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_grant_queue;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_admit;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_sweep_run;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_dispatch;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_heartbeat;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_settle_pass;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_resume;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_first_grant;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_withhold_check;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_reserve_rate;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_judge_rate;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_settle;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_same_receipt;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_receipt_apply;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_agent_accrue;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_accrue;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_reserve;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_carry;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_drop;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_shrink;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_put;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_held_move_counted;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_day_of;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_agent_held_move;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_slot_give;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_slot_take;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_require_fits;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_halt_row_ok;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_plane_json_ok;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_json_ok;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_json_agents_ok;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_json_ceilings_ok;
DROP FUNCTION :QUOTAPLANE_SCHEMA.quota_json_amount_ok;

DROP TABLE :QUOTAPLANE_SCHEMA.quota_waiters;
-- Waiting admissions: one row per admission waiting for a slot of its tenant, served first come,
-- first served by seq (per tenant, under the tenant's lock). request_json is the admission as
-- asked (without its instant), so the transaction that frees a slot can admit it; the lease is
-- renewed while its caller waits. state: 'waiting'; 'granted' (run and pass 1 written, for the
-- caller to collect); 'refused' (something other than concurrency now refuses it; its caller
-- hears what on collect).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_waiters (
  tenant               TEXT COLLATE "C" NOT NULL,
  run_id               TEXT COLLATE "C" NOT NULL,
  seq                  BIGINT NOT NULL CHECK (seq >= 1),
  state                TEXT NOT NULL CHECK (state IN ('waiting', 'granted', 'refused')),
  request_json         TEXT NOT NULL,
  enqueued_at_ms       BIGINT NOT NULL,
  wait_until_ms        BIGINT NOT NULL,
  lease_expires_at_ms  BIGINT NOT NULL,
  decided_at_ms        BIGINT,
  PRIMARY KEY (tenant, run_id)
);
-- The queue of one tenant in arrival order.
CREATE UNIQUE INDEX quota_waiters_by_seq ON :QUOTAPLANE_SCHEMA.quota_waiters (tenant, seq);

-- The books' version of each tenant: raised by every transaction that takes the tenant's
-- admission lock, which every writer of the tenant's books takes first (a batch, a sweep, a
-- retention walk, a quota or halt change, a waiter's collect). An instance may keep a tenant's rows
-- between batches and decide on them without reading them again, then write its decision only if
-- the version is still the one its rows were read at (quota_books_write `expect`): a version moved
-- on means someone else wrote, and the instance reads the rows again under the lock.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_book_versions (
  tenant   TEXT COLLATE "C" PRIMARY KEY,
  version  BIGINT NOT NULL
);

-- Takes `p_tenant`'s admission lock (seed 0, as before) and raises its books' version; answers the
-- version this transaction holds.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_tenant_lock(p_tenant text) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_version bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_book_versions AS v (tenant, version) VALUES (p_tenant, 1)
    ON CONFLICT (tenant) DO UPDATE SET version = v.version + 1
    RETURNING v.version INTO v_version;
  RETURN v_version;
END
$fn$;

CREATE OR REPLACE FUNCTION :QUOTAPLANE_SCHEMA.quota_admission_lock(p_tenant text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM :QUOTAPLANE_SCHEMA.quota_tenant_lock(p_tenant);
END
$fn$;

--
-- quota_books_load(p_want) first takes, in this order, the admission locks of `lock` (tenants, in
-- the order given: the caller sorts them bytewise so two batches never wait on each other in a
-- cycle), the plane lock when `planeLock`, and the audit locks of `auditLock`; every lock is the
-- one the earlier functions take, under the same key. Then, per entry of `tenants`, the rows named:
--   base         the tenant's slot count, stored quota, standing halts, and whether a waiter waits
--                or holds an uncollected grant;  queue: every waiter of the tenant;
--   runs         per run id: its registry row, tombstone, passes, receipts, slot, hold, granted waiter;
--   agents       per agent name: its slot count;  periods: per period, the settled and held figures;
--   agentPeriods per [agent, period]: the agent's figures;  grants: per grant, its rate counter;
--   rateKeys     per [grant, run, dispatch]: the instant it was recorded at (the keys found come back);
--   rateOrdinals per [grant, ordinal]: the recorded instant;  rateAfter: per [grant, sinceMs], the
--                oldest ordinal recorded strictly after sinceMs;  audit: the newest audit row.
-- And store-wide: `plane` (the ceiling), `planeRunning` (every tenant's slots), `planeAgents`
-- (per agent name, its slots across tenants), `turns` (per tenant, its fair-turn clock) and
-- `waitingTenants`: the tenants with a waiting waiter whose admission lock this transaction holds
-- or takes now (tried, never waited for: a tenant busy elsewhere is left out).
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_books_load(p_want jsonb) RETURNS jsonb
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
                                                                 'by_basis', h.by_basis, 'at_ms', h.at_ms) ORDER BY h.scope), '[]'::jsonb)
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
      (SELECT p.ceiling_json FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1)));
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
      SELECT w.tenant, 1 FROM jsonb_array_elements_text(v_store -> 'waitingTenants') AS w(tenant)
      ON CONFLICT (tenant) DO UPDATE SET version = v.version + 1;
  END IF;
  RETURN v_store || jsonb_build_object('tenants', v_tenants, 'versions', v_versions);
END
$fn$;

-- quota_books_write(p_rows) stores what a batch changed, per table: the keys to delete, then the
-- rows to insert or replace whole. Rate rows go by prune (a grant's rows at or before an instant),
-- then insert; the tenants granted to are notified (delivered at commit). Every row carries its
-- tenant. Answers NULL when all is written; a write the server refuses raises (see
-- quota_books_write_caught below for a batch's transaction).
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_books_write(p_rows jsonb) RETURNS jsonb
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  k record;
BEGIN
  -- A write decided on rows kept from an earlier batch (`expect`): written only if no plane ceiling
  -- has been set since, the runs the decisions took to be new have no row in any table keyed by
  -- run (a hold or slot may stand without a registry row), the dispatches they took to be new and
  -- refused are not recorded (`absentRates`; one they record is checked by its insert, the
  -- dispatch key being unique), and, last, each tenant's version is still the one those rows were
  -- read at. The version is raised as it is checked: the row lock that takes waits for a
  -- transaction holding the tenant's admission lock (which raised it first), then sees the version
  -- it committed. Tenants come in bytewise order, as a batch takes their locks. Otherwise nothing
  -- of the batch is written and the answer is {"stale": true}: the caller reads again.
  IF p_rows ? 'expect' THEN
    IF EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1 AND p.ceiling_json IS NOT NULL) THEN
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
      FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'expect') AS x(tenant text, version bigint) LOOP
        IF NOT EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_book_versions v WHERE v.tenant = k.tenant AND v.version = k.version) THEN
          RETURN '{"stale": true}'::jsonb;
        END IF;
      END LOOP;
      RETURN NULL;
    END IF;
    -- A stale tenant after others were raised leaves them raised: harmless, their keepers read again.
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'expect') AS x(tenant text, version bigint) LOOP
      UPDATE :QUOTAPLANE_SCHEMA.quota_book_versions v SET version = v.version + 1 WHERE v.tenant = k.tenant AND v.version = k.version;
      IF NOT FOUND THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
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

-- quota_books_write_caught(p_rows): quota_books_write inside a transaction of many writes. A write
-- the server refuses (a row lock held past lock_timeout, a constraint, a trigger) is undone whole
-- and answered as {code, message, detail, hint} instead of aborting the transaction, so the batch
-- can write its decisions one by one and refuse only the one that fails. (On its own, a refused
-- quota_books_write raises: its statement is its transaction, and nothing of it is kept.)
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_books_write_caught(p_rows jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_detail text;
  v_hint text;
BEGIN
  RETURN :QUOTAPLANE_SCHEMA.quota_books_write(p_rows);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;
  RETURN jsonb_build_object('code', SQLSTATE, 'message', SQLERRM, 'detail', v_detail, 'hint', v_hint);
END
$fn$;

-- The schema of a new quotaplane PostgreSQL store, in schema "quotaplane". Generated from a live database by test/schema/schema-snapshot.ts: refresh it with `npm run snapshot:schema`, never by hand.
-- Applied migrations: 1 quotaplane, 2 books

CREATE DOMAIN quotaplane.quota_amount AS bigint CONSTRAINT quota_amount_check CHECK (((VALUE >= 0) AND (VALUE <= '9007199254740991'::bigint)));
CREATE DOMAIN quotaplane.quota_chain AS jsonb CONSTRAINT quota_chain_check CHECK (((VALUE IS NULL) OR quotaplane.quota_chain_ok(VALUE)));
CREATE DOMAIN quotaplane.quota_count AS bigint CONSTRAINT quota_count_check CHECK ((VALUE >= 0));
CREATE DOMAIN quotaplane.quota_ordinal AS bigint CONSTRAINT quota_ordinal_check CHECK ((VALUE >= 1));
CREATE DOMAIN quotaplane.quota_run_status AS text CONSTRAINT quota_run_status_check CHECK ((VALUE = ANY (ARRAY['running'::text, 'paused'::text, 'withheld'::text, 'stranded'::text, 'concluded'::text, 'released'::text])));
CREATE DOMAIN quotaplane.quota_sum AS numeric CONSTRAINT quota_sum_check CHECK ((VALUE >= (0)::numeric));

CREATE TABLE quotaplane.quota_agent_figures (
  tenant text COLLATE "C" NOT NULL,
  agent_name text COLLATE "C" NOT NULL,
  running quotaplane.quota_count NOT NULL,
  CONSTRAINT quota_agent_figures_pkey PRIMARY KEY (tenant, agent_name)
) WITH (fillfactor=50);

CREATE TABLE quotaplane.quota_agent_spent (
  tenant text COLLATE "C" NOT NULL,
  agent_name text COLLATE "C" NOT NULL,
  period text COLLATE "C" NOT NULL,
  tokens quotaplane.quota_amount NOT NULL,
  minor_units quotaplane.quota_amount NOT NULL,
  held_tokens quotaplane.quota_sum NOT NULL DEFAULT 0,
  held_minor_units quotaplane.quota_sum NOT NULL DEFAULT 0,
  CONSTRAINT quota_agent_spent_pkey PRIMARY KEY (tenant, agent_name, period)
) WITH (fillfactor=50);

CREATE TABLE quotaplane.quota_audit (
  tenant text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  at_ms bigint NOT NULL,
  actor text NOT NULL,
  basis text NOT NULL,
  action text COLLATE "C" NOT NULL,
  subject text NOT NULL,
  detail_json text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  CONSTRAINT quota_audit_pkey PRIMARY KEY (tenant, seq),
  CONSTRAINT quota_audit_seq_check CHECK ((seq >= 1))
);

CREATE TABLE quotaplane.quota_figures (
  tenant text COLLATE "C" NOT NULL,
  running quotaplane.quota_count NOT NULL,
  CONSTRAINT quota_figures_pkey PRIMARY KEY (tenant)
) WITH (fillfactor=50);

CREATE TABLE quotaplane.quota_halted (
  tenant text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  reason text NOT NULL,
  by_actor text NOT NULL,
  by_basis text NOT NULL,
  at_ms bigint NOT NULL,
  CONSTRAINT quota_halted_pkey PRIMARY KEY (tenant, scope)
);

CREATE TABLE quotaplane.quota_passes (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  epoch quotaplane.quota_ordinal NOT NULL,
  period text COLLATE "C" NOT NULL,
  takes_slot boolean NOT NULL,
  started_at_ms bigint NOT NULL,
  lease_expires_at_ms bigint NOT NULL,
  settled_at_ms bigint,
  hold_tokens bigint,
  hold_minor_units bigint,
  receipt_tokens quotaplane.quota_amount,
  receipt_minor_units quotaplane.quota_amount,
  receipt_concludes boolean,
  CONSTRAINT quota_passes_pkey PRIMARY KEY (tenant, run_id, epoch)
);

CREATE TABLE quotaplane.quota_plane (
  id integer NOT NULL,
  ceiling_json jsonb NOT NULL,
  CONSTRAINT quota_plane_id_check CHECK ((id = 1)),
  CONSTRAINT quota_plane_json_ok CHECK (quotaplane.quota_plane_json_ok(ceiling_json)),
  CONSTRAINT quota_plane_pkey PRIMARY KEY (id)
);

CREATE TABLE quotaplane.quota_pruned (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  status text NOT NULL,
  last_epoch bigint NOT NULL,
  closed_at_ms bigint NOT NULL,
  pruned_at_ms bigint NOT NULL,
  CONSTRAINT quota_pruned_last_epoch_check CHECK ((last_epoch >= 1)),
  CONSTRAINT quota_pruned_pkey PRIMARY KEY (tenant, run_id),
  CONSTRAINT quota_pruned_status_check CHECK ((status = ANY (ARRAY['concluded'::text, 'released'::text])))
);

CREATE TABLE quotaplane.quota_rate (
  tenant text COLLATE "C" NOT NULL,
  grant_ref text COLLATE "C" NOT NULL,
  ordinal quotaplane.quota_ordinal NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  dispatch text COLLATE "C" NOT NULL,
  reserved_at_ms bigint NOT NULL,
  CONSTRAINT quota_rate_pkey PRIMARY KEY (tenant, grant_ref, ordinal)
);

CREATE TABLE quotaplane.quota_rate_grants (
  tenant text COLLATE "C" NOT NULL,
  grant_ref text COLLATE "C" NOT NULL,
  last_ordinal quotaplane.quota_ordinal NOT NULL,
  last_at_ms bigint NOT NULL,
  CONSTRAINT quota_rate_grants_pkey PRIMARY KEY (tenant, grant_ref)
) WITH (fillfactor=50);

CREATE TABLE quotaplane.quota_reserved (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  period text COLLATE "C" NOT NULL,
  day text COLLATE "C",
  agent_name text COLLATE "C",
  tokens quotaplane.quota_amount NOT NULL,
  minor_units quotaplane.quota_amount NOT NULL,
  CONSTRAINT quota_reserved_pkey PRIMARY KEY (tenant, run_id)
);

CREATE TABLE quotaplane.quota_running (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  admitted_at_ms bigint NOT NULL,
  agent_name text COLLATE "C",
  CONSTRAINT quota_running_pkey PRIMARY KEY (tenant, run_id)
);

CREATE TABLE quotaplane.quota_runs (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  status quotaplane.quota_run_status NOT NULL,
  agent_name text,
  agent_digest text,
  chain_json quotaplane.quota_chain,
  budget_json text NOT NULL,
  width quotaplane.quota_count NOT NULL,
  admitted_at_ms bigint NOT NULL,
  last_epoch quotaplane.quota_ordinal NOT NULL,
  status_since_ms bigint NOT NULL,
  CONSTRAINT quota_runs_pkey PRIMARY KEY (tenant, run_id)
);

CREATE TABLE quotaplane.quota_settled (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  epoch quotaplane.quota_ordinal NOT NULL,
  period text COLLATE "C",
  tokens quotaplane.quota_amount NOT NULL,
  minor_units quotaplane.quota_amount NOT NULL,
  release_slot boolean NOT NULL,
  concludes boolean NOT NULL,
  CONSTRAINT quota_settled_pkey PRIMARY KEY (tenant, run_id, epoch)
);

CREATE TABLE quotaplane.quota_spent (
  tenant text COLLATE "C" NOT NULL,
  period text COLLATE "C" NOT NULL,
  tokens quotaplane.quota_amount NOT NULL,
  minor_units quotaplane.quota_amount NOT NULL,
  held_tokens quotaplane.quota_sum NOT NULL DEFAULT 0,
  held_minor_units quotaplane.quota_sum NOT NULL DEFAULT 0,
  CONSTRAINT quota_spent_pkey PRIMARY KEY (tenant, period)
) WITH (fillfactor=50);

CREATE TABLE quotaplane.quota_tenants (
  tenant text COLLATE "C" NOT NULL,
  quota_json jsonb NOT NULL,
  CONSTRAINT quota_tenants_pkey PRIMARY KEY (tenant),
  CONSTRAINT quota_tenants_quota_json_ok CHECK (quotaplane.quota_json_ok(quota_json))
);

CREATE TABLE quotaplane.quota_wait_turns (
  tenant text COLLATE "C" NOT NULL,
  vtime bigint NOT NULL,
  CONSTRAINT quota_wait_turns_pkey PRIMARY KEY (tenant),
  CONSTRAINT quota_wait_turns_vtime_check CHECK ((vtime >= 0))
);

CREATE TABLE quotaplane.quota_waiters (
  tenant text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  state text NOT NULL,
  agent_name text,
  agent_digest text,
  chain_json text,
  budget_json text NOT NULL,
  max_tokens bigint,
  max_call_tokens bigint,
  max_minor_units bigint,
  max_call_minor_units bigint,
  width bigint NOT NULL,
  lease_ms bigint NOT NULL,
  cover_keys text[] NOT NULL,
  quota_given boolean NOT NULL,
  given_max_runs bigint,
  given_limit_tokens bigint,
  given_limit_minor_units bigint,
  given_period text,
  given_agent_max_runs bigint,
  given_agent_limit_tokens bigint,
  given_agent_limit_minor_units bigint,
  enqueued_at_ms bigint NOT NULL,
  wait_until_ms bigint NOT NULL,
  lease_expires_at_ms bigint NOT NULL,
  decided_at_ms bigint,
  CONSTRAINT quota_waiters_pkey PRIMARY KEY (tenant, run_id),
  CONSTRAINT quota_waiters_seq_check CHECK ((seq >= 1)),
  CONSTRAINT quota_waiters_state_check CHECK ((state = ANY (ARRAY['waiting'::text, 'granted'::text, 'refused'::text])))
);

CREATE TABLE quotaplane.quotaplane_api_keys (
  key_id text COLLATE "C" NOT NULL,
  key_hash text COLLATE "C" NOT NULL,
  name text NOT NULL,
  role text NOT NULL,
  tenant text COLLATE "C" NOT NULL,
  created_at_ms bigint NOT NULL,
  revoked_at_ms bigint,
  CONSTRAINT quotaplane_api_keys_check CHECK (((role = 'operator'::text) OR (tenant <> '*'::text))),
  CONSTRAINT quotaplane_api_keys_key_hash_key UNIQUE (key_hash),
  CONSTRAINT quotaplane_api_keys_pkey PRIMARY KEY (key_id),
  CONSTRAINT quotaplane_api_keys_role_check CHECK ((role = ANY (ARRAY['runner'::text, 'operator'::text])))
);

CREATE TABLE quotaplane.quotaplane_schema (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at_ms bigint NOT NULL,
  CONSTRAINT quotaplane_schema_pkey PRIMARY KEY (version)
);

CREATE INDEX quota_agent_figures_by_agent ON quotaplane.quota_agent_figures USING btree (agent_name);
CREATE UNIQUE INDEX quota_agent_figures_pkey ON quotaplane.quota_agent_figures USING btree (tenant, agent_name);
CREATE UNIQUE INDEX quota_agent_spent_pkey ON quotaplane.quota_agent_spent USING btree (tenant, agent_name, period);
CREATE INDEX quota_audit_by_action ON quotaplane.quota_audit USING btree (tenant, action, seq);
CREATE UNIQUE INDEX quota_audit_pkey ON quotaplane.quota_audit USING btree (tenant, seq);
CREATE UNIQUE INDEX quota_figures_pkey ON quotaplane.quota_figures USING btree (tenant);
CREATE UNIQUE INDEX quota_halted_pkey ON quotaplane.quota_halted USING btree (tenant, scope);
CREATE UNIQUE INDEX quota_passes_pkey ON quotaplane.quota_passes USING btree (tenant, run_id, epoch);
CREATE INDEX quota_passes_unsettled ON quotaplane.quota_passes USING btree (tenant, lease_expires_at_ms) WHERE (settled_at_ms IS NULL);
CREATE UNIQUE INDEX quota_plane_pkey ON quotaplane.quota_plane USING btree (id);
CREATE UNIQUE INDEX quota_pruned_pkey ON quotaplane.quota_pruned USING btree (tenant, run_id);
CREATE INDEX quota_rate_by_instant ON quotaplane.quota_rate USING btree (tenant, grant_ref, reserved_at_ms);
CREATE UNIQUE INDEX quota_rate_by_key ON quotaplane.quota_rate USING btree (tenant, grant_ref, run_id, dispatch);
CREATE UNIQUE INDEX quota_rate_pkey ON quotaplane.quota_rate USING btree (tenant, grant_ref, ordinal);
CREATE UNIQUE INDEX quota_rate_grants_pkey ON quotaplane.quota_rate_grants USING btree (tenant, grant_ref);
CREATE UNIQUE INDEX quota_reserved_pkey ON quotaplane.quota_reserved USING btree (tenant, run_id);
CREATE UNIQUE INDEX quota_running_pkey ON quotaplane.quota_running USING btree (tenant, run_id);
CREATE UNIQUE INDEX quota_runs_pkey ON quotaplane.quota_runs USING btree (tenant, run_id);
CREATE INDEX quota_runs_running ON quotaplane.quota_runs USING btree (tenant, run_id) WHERE ((status)::text = 'running'::text);
CREATE UNIQUE INDEX quota_settled_pkey ON quotaplane.quota_settled USING btree (tenant, run_id, epoch);
CREATE UNIQUE INDEX quota_spent_pkey ON quotaplane.quota_spent USING btree (tenant, period);
CREATE UNIQUE INDEX quota_tenants_pkey ON quotaplane.quota_tenants USING btree (tenant);
CREATE UNIQUE INDEX quota_wait_turns_pkey ON quotaplane.quota_wait_turns USING btree (tenant);
CREATE UNIQUE INDEX quota_waiters_by_seq ON quotaplane.quota_waiters USING btree (tenant, seq);
CREATE UNIQUE INDEX quota_waiters_pkey ON quotaplane.quota_waiters USING btree (tenant, run_id);
CREATE UNIQUE INDEX quotaplane_api_keys_key_hash_key ON quotaplane.quotaplane_api_keys USING btree (key_hash);
CREATE UNIQUE INDEX quotaplane_api_keys_pkey ON quotaplane.quotaplane_api_keys USING btree (key_id);
CREATE UNIQUE INDEX quotaplane_schema_pkey ON quotaplane.quotaplane_schema USING btree (version);

CREATE OR REPLACE FUNCTION quotaplane.quota_accrue(p_tenant text, p_month text, p_day text, p_tokens bigint, p_minor_units bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_spent record;
BEGIN
  FOR v_spent IN
    SELECT q.period, q.tokens, q.minor_units FROM "quotaplane".quota_spent q
     WHERE q.tenant = p_tenant AND q.period IN (p_month, p_day) ORDER BY q.period FOR UPDATE
  LOOP
    -- quota_require_fits only when it raises (a call is a statement of its own).
    IF v_spent.tokens::numeric + p_tokens > 9007199254740991 THEN
      PERFORM "quotaplane".quota_require_fits('spend.tokens', 'the settled spend of period ' || v_spent.period || ' (tokens)',
                                      v_spent.tokens, p_tokens);
    END IF;
    IF v_spent.minor_units::numeric + p_minor_units > 9007199254740991 THEN
      PERFORM "quotaplane".quota_require_fits('spend.minorUnits', 'the settled spend of period ' || v_spent.period || ' (minor units)',
                                      v_spent.minor_units, p_minor_units);
    END IF;
  END LOOP;
  INSERT INTO "quotaplane".quota_spent AS q (tenant, period, tokens, minor_units)
    SELECT p_tenant, k.period, p_tokens, p_minor_units
      FROM (VALUES (1, p_month), (2, p_day)) AS k(position, period)
     WHERE k.period IS NOT NULL ORDER BY k.position
    ON CONFLICT (tenant, period) DO UPDATE SET
      tokens = q.tokens + excluded.tokens, minor_units = q.minor_units + excluded.minor_units;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_admission_lock(p_tenant text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_admit(p_tenant text, p_run text, p_agent_name text, p_agent_digest text, p_chain_json text, p_budget_json text, p_max_tokens bigint, p_max_call_tokens bigint, p_max_minor_units bigint, p_max_call_minor_units bigint, p_width bigint, p_at_ms bigint, p_lease_ms bigint, p_month_key text, p_day_key text, p_cover_keys text[], p_quota_given boolean, p_given_max_runs bigint, p_given_limit_tokens bigint, p_given_limit_minor_units bigint, p_given_period text, p_given_agent_max_runs bigint, p_given_agent_limit_tokens bigint, p_given_agent_limit_minor_units bigint, OUT outcome text, OUT run_status text, OUT grant_period text, OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint, OUT max_runs bigint, OUT limit_tokens bigint, OUT limit_minor_units bigint, OUT running bigint, OUT settled_tokens bigint, OUT settled_minor_units bigint, OUT reserved_tokens bigint, OUT reserved_minor_units bigint, OUT halts json, OUT agent_max_runs bigint, OUT agent_limit_tokens bigint, OUT agent_limit_minor_units bigint, OUT agent_running bigint, OUT plane_running bigint, OUT plane_agent_running bigint, OUT plane_max_runs bigint, OUT plane_agent_max_runs bigint, OUT agent_settled_tokens bigint, OUT agent_settled_minor_units bigint, OUT agent_reserved_tokens bigint, OUT agent_reserved_minor_units bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_quota jsonb;
  v_halted boolean;
  v_period_kind text;
  v_bounds_spend boolean;
  v_bounds_tokens boolean;
  v_bounds_minor_units boolean;
  v_reserve record;
  v_first record;
  v_pruned boolean;
  v_waiters boolean;
BEGIN
  -- The run, its tombstone, the halts, the stored quota and whether there may be waiters to serve
  -- in one statement (one snapshot, one executor start).
  SELECT (SELECT r.status FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run),
         EXISTS (SELECT 1 FROM "quotaplane".quota_pruned x WHERE x.tenant = p_tenant AND x.run_id = p_run),
         EXISTS (SELECT 1 FROM "quotaplane".quota_halted h
                  WHERE h.tenant = p_tenant
                    AND (h.scope = ANY (p_cover_keys) OR NOT "quotaplane".quota_halt_row_ok(h.scope, h.by_basis, h.at_ms))),
         CASE WHEN p_quota_given THEN NULL
              ELSE (SELECT t.quota_json FROM "quotaplane".quota_tenants t WHERE t.tenant = p_tenant) END,
         (EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM "quotaplane".quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL))
    INTO run_status, v_pruned, v_halted, v_quota, v_waiters;
  -- A run id a prune removed is never admitted again as if new (docs/design/rules.md#r4). A batched
  -- admission holds the tenant's admission lock, as a prune batch does, so no prune commits between
  -- this read and the admission's own.
  IF v_pruned THEN
    outcome := 'pruned';
    RETURN;
  END IF;
  IF run_status IS NOT NULL THEN
    SELECT * INTO v_first FROM "quotaplane".quota_first_grant(p_tenant, p_run, run_status);
    outcome := v_first.outcome;
    grant_period := v_first.grant_period;
    hold_tokens := v_first.hold_tokens;
    hold_minor_units := v_first.hold_minor_units;
    lease_expires_at_ms := v_first.lease_expires_at_ms;
    RETURN;
  END IF;

  -- Waiters first (docs/design/rules.md#w2): no later arrival takes a slot ahead of a waiter that
  -- fits.
  IF v_waiters THEN
    PERFORM "quotaplane".quota_grant_waiters(p_tenant, p_at_ms);
  END IF;

  IF v_halted THEN
    outcome := 'halted';
    SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
                                      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      INTO halts FROM "quotaplane".quota_halted h WHERE h.tenant = p_tenant;
    RETURN;
  END IF;

  IF p_quota_given THEN
    max_runs := p_given_max_runs;
    limit_tokens := p_given_limit_tokens;
    limit_minor_units := p_given_limit_minor_units;
    v_period_kind := p_given_period;
    agent_max_runs := p_given_agent_max_runs;
    agent_limit_tokens := p_given_agent_limit_tokens;
    agent_limit_minor_units := p_given_agent_limit_minor_units;
  ELSE
    max_runs := (v_quota ->> 'maxConcurrentRuns')::numeric::bigint;
    limit_tokens := (v_quota ->> 'maxTokensPerPeriod')::numeric::bigint;
    limit_minor_units := (v_quota ->> 'maxMinorUnitsPerPeriod')::numeric::bigint;
    v_period_kind := coalesce(v_quota ->> 'period', 'monthly');
    IF p_agent_name IS NOT NULL THEN
      agent_max_runs := (v_quota -> 'agents' -> p_agent_name ->> 'maxConcurrentRuns')::numeric::bigint;
      agent_limit_tokens := (v_quota -> 'agents' -> p_agent_name ->> 'maxTokensPerPeriod')::numeric::bigint;
      agent_limit_minor_units := (v_quota -> 'agents' -> p_agent_name ->> 'maxMinorUnitsPerPeriod')::numeric::bigint;
    END IF;
  END IF;
  grant_period := CASE WHEN v_period_kind = 'daily' THEN p_day_key ELSE p_month_key END;

  -- A unit bounded by the tenant or by the run's agent is held (core holdQuotaFor).
  v_bounds_tokens := limit_tokens IS NOT NULL OR agent_limit_tokens IS NOT NULL;
  v_bounds_minor_units := limit_minor_units IS NOT NULL OR agent_limit_minor_units IS NOT NULL;
  v_bounds_spend := v_bounds_tokens OR v_bounds_minor_units;
  IF v_bounds_spend THEN
    hold_tokens := 0;
    hold_minor_units := 0;
    IF v_bounds_tokens THEN
      IF p_max_tokens IS NULL OR p_max_call_tokens IS NULL THEN
        outcome := 'unbounded';
        RETURN;
      END IF;
      IF coalesce((p_max_tokens)::numeric, 0) + coalesce((p_width::numeric * p_max_call_tokens)::numeric, 0) > 9007199254740991 THEN
        PERFORM "quotaplane".quota_require_fits('budget.maxTokens', 'the hold maxTokens + width × maxCallTokens',
                                        p_max_tokens, p_width::numeric * p_max_call_tokens);
      END IF;
      hold_tokens := p_max_tokens + p_width::numeric * p_max_call_tokens;
    END IF;
    IF v_bounds_minor_units THEN
      IF p_max_minor_units IS NULL OR p_max_call_minor_units IS NULL THEN
        outcome := 'unbounded';
        RETURN;
      END IF;
      IF coalesce((p_max_minor_units)::numeric, 0) + coalesce((p_width::numeric * p_max_call_minor_units)::numeric, 0) > 9007199254740991 THEN
        PERFORM "quotaplane".quota_require_fits('budget.maxMinorUnits', 'the hold maxMinorUnits + width × maxCallMinorUnits',
                                        p_max_minor_units, p_width::numeric * p_max_call_minor_units);
      END IF;
      hold_minor_units := p_max_minor_units + p_width::numeric * p_max_call_minor_units;
    END IF;
  END IF;

  SELECT * INTO v_reserve FROM "quotaplane".quota_reserve(
    p_tenant, p_run, max_runs,
    CASE WHEN v_bounds_spend THEN grant_period END, hold_tokens, hold_minor_units,
    limit_tokens, limit_minor_units, p_at_ms,
    p_agent_name, agent_max_runs, agent_limit_tokens, agent_limit_minor_units);
  running := v_reserve.running;
  agent_running := v_reserve.agent_running;
  plane_running := v_reserve.plane_running;
  plane_agent_running := v_reserve.plane_agent_running;
  plane_max_runs := v_reserve.plane_max_runs;
  plane_agent_max_runs := v_reserve.plane_agent_max_runs;
  agent_settled_tokens := v_reserve.agent_settled_tokens;
  agent_settled_minor_units := v_reserve.agent_settled_minor_units;
  agent_reserved_tokens := v_reserve.agent_reserved_tokens;
  agent_reserved_minor_units := v_reserve.agent_reserved_minor_units;
  settled_tokens := v_reserve.settled_tokens;
  settled_minor_units := v_reserve.settled_minor_units;
  reserved_tokens := v_reserve.reserved_tokens;
  reserved_minor_units := v_reserve.reserved_minor_units;
  IF v_reserve.outcome <> 'ok' THEN
    outcome := v_reserve.outcome;
    RETURN;
  END IF;

  INSERT INTO "quotaplane".quota_runs AS r
      (tenant, run_id, status, agent_name, agent_digest, chain_json, budget_json, width, admitted_at_ms, last_epoch,
       status_since_ms)
    VALUES (p_tenant, p_run, 'running', p_agent_name, p_agent_digest, p_chain_json::jsonb, p_budget_json, p_width, p_at_ms, 1,
            p_at_ms)
    ON CONFLICT (tenant, run_id) DO NOTHING;
  IF NOT FOUND THEN
    -- A concurrent admission of this very run committed first: this call is its retry.
    SELECT r.status INTO run_status FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
    SELECT * INTO v_first FROM "quotaplane".quota_first_grant(p_tenant, p_run, run_status);
    outcome := v_first.outcome;
    grant_period := v_first.grant_period;
    hold_tokens := v_first.hold_tokens;
    hold_minor_units := v_first.hold_minor_units;
    lease_expires_at_ms := v_first.lease_expires_at_ms;
    RETURN;
  END IF;
  run_status := 'running';

  -- The grant reports the run's hold as it stands now (null when it holds none): the one just
  -- taken, else whatever the run held before (an earlier reserve of the same run id), read back.
  IF NOT v_reserve.hold_taken THEN
    hold_tokens := NULL;
    hold_minor_units := NULL;
    SELECT q.tokens, q.minor_units INTO hold_tokens, hold_minor_units
      FROM "quotaplane".quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  END IF;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint;
  INSERT INTO "quotaplane".quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, 1, grant_period, true, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'admitted';
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_agent_accrue(p_tenant text, p_agent text, p_period text, p_tokens bigint, p_minor_units bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO "quotaplane".quota_agent_spent AS q (tenant, agent_name, period, tokens, minor_units)
    VALUES (p_tenant, p_agent, p_period, p_tokens, p_minor_units)
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
      tokens = q.tokens + excluded.tokens, minor_units = q.minor_units + excluded.minor_units;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_agent_held_move(p_tenant text, p_agent text, p_period text, p_tokens numeric, p_minor_units numeric)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF p_agent IS NULL OR (p_tokens = 0 AND p_minor_units = 0) THEN
    RETURN;
  END IF;
  IF p_tokens <= 0 AND p_minor_units <= 0 THEN
    UPDATE "quotaplane".quota_agent_spent
       SET held_tokens = held_tokens + p_tokens, held_minor_units = held_minor_units + p_minor_units
     WHERE tenant = p_tenant AND agent_name = p_agent AND period = p_period;
    RETURN;
  END IF;
  INSERT INTO "quotaplane".quota_agent_spent AS q (tenant, agent_name, period, tokens, minor_units, held_tokens, held_minor_units)
    VALUES (p_tenant, p_agent, p_period, 0, 0, p_tokens, p_minor_units)
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
      held_tokens = q.held_tokens + excluded.held_tokens,
      held_minor_units = q.held_minor_units + excluded.held_minor_units;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_batch(p_items jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_key bigint;
  v_item jsonb;
  v_args jsonb;
  v_row jsonb;
  v_state text;
  v_message text;
  v_detail text;
  v_hint text;
  v_results jsonb := '[]'::jsonb;
  v_lock_started timestamptz;
  v_lock_waited interval := interval '0';
  v_lock_wait_ms bigint;
  v_wait jsonb;
  v_at bigint;
BEGIN
  FOR v_key IN
    SELECT DISTINCT hashtextextended('"quotaplane".quota-admission:' || octet_length(t.tenant) || ':' || t.tenant, 0) AS k
      FROM (SELECT e.item -> 'args' ->> 0 AS tenant FROM jsonb_array_elements(p_items) AS e(item)) AS t
     ORDER BY k
  LOOP
    -- Only a lock another transaction holds is waited for, and only that wait is measured: an
    -- uncontended batch adds exactly 0 ms to its decisions' instants.
    IF NOT pg_try_advisory_xact_lock(v_key) THEN
      v_lock_started := clock_timestamp();
      PERFORM pg_advisory_xact_lock(v_key);
      v_lock_waited := v_lock_waited + (clock_timestamp() - v_lock_started);
    END IF;
  END LOOP;
  v_lock_wait_ms := floor(extract(epoch FROM v_lock_waited) * 1000)::bigint;
  FOR v_item IN SELECT e.item FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(item, position) ORDER BY e.position LOOP
    v_args := v_item -> 'args';
    v_wait := v_item -> 'wait';
    BEGIN
      IF v_wait IS NOT NULL THEN
        v_at := (v_args ->> (v_wait ->> 'at')::int)::bigint + v_lock_wait_ms;
        IF v_at - (v_wait ->> 'askedMs')::bigint > (v_wait ->> 'maxMs')::bigint THEN
          RAISE EXCEPTION 'quotaplane: the decision waited longer than its bound' USING ERRCODE = 'QPW01',
            DETAIL = (v_at - (v_wait ->> 'askedMs')::bigint)::text, HINT = v_wait ->> 'maxMs';
        END IF;
        IF v_lock_wait_ms > 0 THEN
          v_args := jsonb_set(v_args, ARRAY[v_wait ->> 'at'], to_jsonb(v_at));
          IF v_wait ? 'month' THEN
            v_args := jsonb_set(v_args, ARRAY[v_wait ->> 'month'], to_jsonb(to_char(to_timestamp(v_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM')));
          END IF;
          IF v_wait ? 'day' THEN
            v_args := jsonb_set(v_args, ARRAY[v_wait ->> 'day'], to_jsonb(to_char(to_timestamp(v_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')));
          END IF;
        END IF;
      END IF;
      CASE v_item ->> 'op'
        WHEN 'admit' THEN
          v_row := to_jsonb("quotaplane".quota_admit(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::text,
            (v_args ->> 3)::text,
            (v_args ->> 4)::text,
            (v_args ->> 5)::text,
            (v_args ->> 6)::bigint,
            (v_args ->> 7)::bigint,
            (v_args ->> 8)::bigint,
            (v_args ->> 9)::bigint,
            (v_args ->> 10)::bigint,
            (v_args ->> 11)::bigint,
            (v_args ->> 12)::bigint,
            (v_args ->> 13)::text,
            (v_args ->> 14)::text,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 15, '[]'::jsonb)))::text[],
            (v_args ->> 16)::boolean,
            (v_args ->> 17)::bigint,
            (v_args ->> 18)::bigint,
            (v_args ->> 19)::bigint,
            (v_args ->> 20)::text,
            (v_args ->> 21)::bigint,
            (v_args ->> 22)::bigint,
            (v_args ->> 23)::bigint));
        WHEN 'resume' THEN
          v_row := to_jsonb("quotaplane".quota_resume(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::bigint,
            (v_args ->> 4)::text,
            (v_args ->> 5)::text));
        WHEN 'settlePass' THEN
          v_row := to_jsonb("quotaplane".quota_settle_pass(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::bigint,
            (v_args ->> 4)::bigint,
            (v_args ->> 5)::boolean,
            (v_args ->> 6)::bigint));
        WHEN 'dispatch' THEN
          v_row := to_jsonb("quotaplane".quota_dispatch(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::text,
            (v_args ->> 3)::text,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 4, '[]'::jsonb)))::bigint[],
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 5, '[]'::jsonb)))::bigint[],
            (v_args ->> 6)::bigint,
            (v_args ->> 7)::boolean,
            (v_args ->> 8)::bigint,
            (v_args ->> 9)::bigint));
        WHEN 'heartbeat' THEN
          v_row := to_jsonb("quotaplane".quota_heartbeat(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::bigint,
            (v_args ->> 4)::bigint));
        WHEN 'reserve' THEN
          v_row := to_jsonb("quotaplane".quota_reserve(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::text,
            (v_args ->> 4)::bigint,
            (v_args ->> 5)::bigint,
            (v_args ->> 6)::bigint,
            (v_args ->> 7)::bigint,
            (v_args ->> 8)::bigint,
            (v_args ->> 9)::text,
            (v_args ->> 10)::bigint,
            (v_args ->> 11)::bigint,
            (v_args ->> 12)::bigint));
        WHEN 'settle' THEN
          v_row := jsonb_build_object('outcome', "quotaplane".quota_settle(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::text,
            (v_args ->> 4)::bigint,
            (v_args ->> 5)::bigint,
            (v_args ->> 6)::boolean,
            (v_args ->> 7)::boolean));
        WHEN 'reserveRate' THEN
          v_row := to_jsonb("quotaplane".quota_reserve_rate(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::text,
            (v_args ->> 3)::text,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 4, '[]'::jsonb)))::bigint[],
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 5, '[]'::jsonb)))::bigint[],
            (v_args ->> 6)::bigint,
            (v_args ->> 7)::boolean));
        WHEN 'sweepRun' THEN
          v_row := to_jsonb("quotaplane".quota_sweep_run(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint));
        ELSE
          RAISE EXCEPTION 'quotaplane: unknown batched decision %', v_item ->> 'op' USING ERRCODE = 'XX000';
      END CASE;
      IF v_wait IS NOT NULL AND jsonb_typeof(v_row) = 'object' THEN
        v_row := v_row || jsonb_build_object('applied_at_ms', v_at);
      END IF;
      v_results := v_results || jsonb_build_array(jsonb_build_object('ok', v_row));
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
        v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;
      v_results := v_results || jsonb_build_array(jsonb_build_object('error',
        jsonb_build_object('code', v_state, 'message', v_message, 'detail', v_detail, 'hint', v_hint)));
    END;
  END LOOP;
  RETURN v_results;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_books_load(p_want jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
BEGIN
  FOR v_key IN SELECT jsonb_array_elements_text(coalesce(p_want -> 'lock', '[]'::jsonb)) LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(v_key) || ':' || v_key, 0));
  END LOOP;
  IF coalesce((p_want ->> 'planeLock')::boolean, false) THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-plane', 3));
  END IF;
  FOR v_key IN SELECT jsonb_array_elements_text(coalesce(p_want -> 'auditLock', '[]'::jsonb)) LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-audit:' || octet_length(v_key) || ':' || v_key, 3));
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
          'running', coalesce((SELECT f.running FROM "quotaplane".quota_figures f WHERE f.tenant = v_tenant), 0),
          'quota', (SELECT q.quota_json FROM "quotaplane".quota_tenants q WHERE q.tenant = v_tenant),
          'halts', (SELECT coalesce(jsonb_agg(jsonb_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
                                                                 'by_basis', h.by_basis, 'at_ms', h.at_ms) ORDER BY h.scope), '[]'::jsonb)
                      FROM "quotaplane".quota_halted h WHERE h.tenant = v_tenant),
          'waiting', EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = v_tenant AND w.state = 'waiting')) END,
      'runs', CASE WHEN cardinality(v_runs) > 0 THEN jsonb_build_object(
          'runs', (SELECT jsonb_agg(to_jsonb(r) - 'tenant') FROM "quotaplane".quota_runs r
                    WHERE r.tenant = v_tenant AND r.run_id = ANY (v_runs)),
          'pruned', (SELECT jsonb_agg(to_jsonb(x) - 'tenant') FROM "quotaplane".quota_pruned x
                      WHERE x.tenant = v_tenant AND x.run_id = ANY (v_runs)),
          'passes', (SELECT jsonb_agg(to_jsonb(p) - 'tenant') FROM "quotaplane".quota_passes p
                      WHERE p.tenant = v_tenant AND p.run_id = ANY (v_runs)),
          'settled', (SELECT jsonb_agg(to_jsonb(s) - 'tenant') FROM "quotaplane".quota_settled s
                       WHERE s.tenant = v_tenant AND s.run_id = ANY (v_runs)),
          'slots', (SELECT jsonb_agg(to_jsonb(o) - 'tenant') FROM "quotaplane".quota_running o
                     WHERE o.tenant = v_tenant AND o.run_id = ANY (v_runs)),
          'holds', (SELECT jsonb_agg(to_jsonb(h) - 'tenant') FROM "quotaplane".quota_reserved h
                     WHERE h.tenant = v_tenant AND h.run_id = ANY (v_runs)),
          'granted', (SELECT jsonb_agg(jsonb_build_object('run_id', w.run_id, 'lease_expires_at_ms', w.lease_expires_at_ms))
                       FROM "quotaplane".quota_waiters w
                      WHERE w.tenant = v_tenant AND w.run_id = ANY (v_runs) AND w.state = 'granted')) END,
      'agents', CASE WHEN cardinality(v_agents) > 0 THEN
          (SELECT jsonb_agg(jsonb_build_object('agent_name', a.agent_name, 'running', a.running))
             FROM "quotaplane".quota_agent_figures a WHERE a.tenant = v_tenant AND a.agent_name = ANY (v_agents)) END,
      'periods', CASE WHEN cardinality(v_periods) > 0 THEN
          (SELECT jsonb_agg(to_jsonb(s) - 'tenant') FROM "quotaplane".quota_spent s
            WHERE s.tenant = v_tenant AND s.period = ANY (v_periods)) END,
      'agentPeriods', (SELECT jsonb_agg(to_jsonb(s) - 'tenant')
          FROM jsonb_array_elements(coalesce(v_t -> 'agentPeriods', '[]'::jsonb)) AS k(pair)
          JOIN "quotaplane".quota_agent_spent s
            ON s.tenant = v_tenant AND s.agent_name = k.pair ->> 0 AND s.period = k.pair ->> 1),
      'grants', CASE WHEN cardinality(v_grants) > 0 THEN
          (SELECT jsonb_agg(to_jsonb(g) - 'tenant') FROM "quotaplane".quota_rate_grants g
            WHERE g.tenant = v_tenant AND g.grant_ref = ANY (v_grants)) END,
      'rateKeys', (SELECT jsonb_agg(k.triple || to_jsonb(q.reserved_at_ms))
          FROM jsonb_array_elements(coalesce(v_t -> 'rateKeys', '[]'::jsonb)) AS k(triple)
          JOIN "quotaplane".quota_rate q
            ON q.tenant = v_tenant AND q.grant_ref = k.triple ->> 0 AND q.run_id = k.triple ->> 1 AND q.dispatch = k.triple ->> 2),
      'rateOrdinals', (SELECT jsonb_agg(jsonb_build_array(q.grant_ref, q.ordinal, q.reserved_at_ms))
          FROM jsonb_array_elements(coalesce(v_t -> 'rateOrdinals', '[]'::jsonb)) AS k(pair)
          JOIN "quotaplane".quota_rate q
            ON q.tenant = v_tenant AND q.grant_ref = k.pair ->> 0 AND q.ordinal = (k.pair ->> 1)::bigint),
      'rateAfter', (SELECT jsonb_agg(jsonb_build_array(k.pair -> 0, k.pair -> 1,
            (SELECT q.ordinal FROM "quotaplane".quota_rate q
              WHERE q.tenant = v_tenant AND q.grant_ref = k.pair ->> 0 AND q.reserved_at_ms > (k.pair ->> 1)::bigint
              ORDER BY q.reserved_at_ms, q.ordinal LIMIT 1)))
          FROM jsonb_array_elements(coalesce(v_t -> 'rateAfter', '[]'::jsonb)) AS k(pair)),
      'audit', CASE WHEN coalesce((v_t ->> 'audit')::boolean, false) THEN jsonb_build_object('head',
          (SELECT jsonb_build_object('seq', a.seq, 'hash', a.hash) FROM "quotaplane".quota_audit a
            WHERE a.tenant = v_tenant ORDER BY a.seq DESC LIMIT 1)) END));
  END LOOP;

  IF coalesce((p_want ->> 'plane')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('plane', jsonb_build_object('ceiling',
      (SELECT p.ceiling_json FROM "quotaplane".quota_plane p WHERE p.id = 1)));
  END IF;
  IF coalesce((p_want ->> 'planeRunning')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('planeRunning', coalesce((SELECT sum(f.running) FROM "quotaplane".quota_figures f), 0));
  END IF;
  IF jsonb_array_length(coalesce(p_want -> 'planeAgents', '[]'::jsonb)) > 0 THEN
    v_store := v_store || jsonb_build_object('planeAgents', (SELECT jsonb_object_agg(n.agent,
        coalesce((SELECT sum(a.running) FROM "quotaplane".quota_agent_figures a WHERE a.agent_name = n.agent), 0))
      FROM jsonb_array_elements_text(p_want -> 'planeAgents') AS n(agent)));
  END IF;
  RETURN v_store || jsonb_build_object('tenants', v_tenants);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_books_write(p_rows jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_detail text;
  v_hint text;
BEGIN
  DELETE FROM "quotaplane".quota_running t USING jsonb_to_recordset(coalesce(p_rows -> 'slotsGone', '[]'::jsonb)) AS k(tenant text, run_id text)
   WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
  INSERT INTO "quotaplane".quota_running AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_running, coalesce(p_rows -> 'slots', '[]'::jsonb))
    ON CONFLICT (tenant, run_id) DO UPDATE SET admitted_at_ms = excluded.admitted_at_ms, agent_name = excluded.agent_name;

  DELETE FROM "quotaplane".quota_reserved t USING jsonb_to_recordset(coalesce(p_rows -> 'holdsGone', '[]'::jsonb)) AS k(tenant text, run_id text)
   WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
  INSERT INTO "quotaplane".quota_reserved AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_reserved, coalesce(p_rows -> 'holds', '[]'::jsonb))
    ON CONFLICT (tenant, run_id) DO UPDATE SET period = excluded.period, day = excluded.day, agent_name = excluded.agent_name,
      tokens = excluded.tokens, minor_units = excluded.minor_units;

  INSERT INTO "quotaplane".quota_figures AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_figures, coalesce(p_rows -> 'figures', '[]'::jsonb))
    ON CONFLICT (tenant) DO UPDATE SET running = excluded.running;
  INSERT INTO "quotaplane".quota_agent_figures AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_agent_figures, coalesce(p_rows -> 'agentFigures', '[]'::jsonb))
    ON CONFLICT (tenant, agent_name) DO UPDATE SET running = excluded.running;
  INSERT INTO "quotaplane".quota_spent AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_spent, coalesce(p_rows -> 'spent', '[]'::jsonb))
    ON CONFLICT (tenant, period) DO UPDATE SET tokens = excluded.tokens, minor_units = excluded.minor_units,
      held_tokens = excluded.held_tokens, held_minor_units = excluded.held_minor_units;
  INSERT INTO "quotaplane".quota_agent_spent AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_agent_spent, coalesce(p_rows -> 'agentSpent', '[]'::jsonb))
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET tokens = excluded.tokens, minor_units = excluded.minor_units,
      held_tokens = excluded.held_tokens, held_minor_units = excluded.held_minor_units;

  DELETE FROM "quotaplane".quota_passes t USING jsonb_to_recordset(coalesce(p_rows -> 'passesGone', '[]'::jsonb)) AS k(tenant text, run_id text, epoch bigint)
   WHERE t.tenant = k.tenant AND t.run_id = k.run_id AND t.epoch = k.epoch;
  DELETE FROM "quotaplane".quota_runs t USING jsonb_to_recordset(coalesce(p_rows -> 'runsGone', '[]'::jsonb)) AS k(tenant text, run_id text)
   WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
  INSERT INTO "quotaplane".quota_runs AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_runs, coalesce(p_rows -> 'runs', '[]'::jsonb))
    ON CONFLICT (tenant, run_id) DO UPDATE SET status = excluded.status, agent_name = excluded.agent_name,
      agent_digest = excluded.agent_digest, chain_json = excluded.chain_json, budget_json = excluded.budget_json,
      width = excluded.width, admitted_at_ms = excluded.admitted_at_ms, last_epoch = excluded.last_epoch,
      status_since_ms = excluded.status_since_ms;
  INSERT INTO "quotaplane".quota_passes AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_passes, coalesce(p_rows -> 'passes', '[]'::jsonb))
    ON CONFLICT (tenant, run_id, epoch) DO UPDATE SET period = excluded.period, takes_slot = excluded.takes_slot,
      started_at_ms = excluded.started_at_ms, lease_expires_at_ms = excluded.lease_expires_at_ms,
      settled_at_ms = excluded.settled_at_ms, hold_tokens = excluded.hold_tokens, hold_minor_units = excluded.hold_minor_units,
      receipt_tokens = excluded.receipt_tokens, receipt_minor_units = excluded.receipt_minor_units,
      receipt_concludes = excluded.receipt_concludes;
  INSERT INTO "quotaplane".quota_settled
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_settled, coalesce(p_rows -> 'receipts', '[]'::jsonb));

  DELETE FROM "quotaplane".quota_rate t USING jsonb_to_recordset(coalesce(p_rows -> 'ratePrunes', '[]'::jsonb)) AS k(tenant text, grant_ref text, floor_ms bigint)
   WHERE t.tenant = k.tenant AND t.grant_ref = k.grant_ref AND t.reserved_at_ms <= k.floor_ms;
  INSERT INTO "quotaplane".quota_rate
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_rate, coalesce(p_rows -> 'rates', '[]'::jsonb));
  INSERT INTO "quotaplane".quota_rate_grants AS t
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_rate_grants, coalesce(p_rows -> 'rateGrants', '[]'::jsonb))
    ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms;

  UPDATE "quotaplane".quota_waiters t SET state = 'waiting', decided_at_ms = NULL,
         lease_expires_at_ms = greatest(t.lease_expires_at_ms, k.lease_expires_at_ms)
    FROM jsonb_to_recordset(coalesce(p_rows -> 'requeued', '[]'::jsonb)) AS k(tenant text, run_id text, lease_expires_at_ms bigint)
   WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
  INSERT INTO "quotaplane".quota_audit
    SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_audit, coalesce(p_rows -> 'audit', '[]'::jsonb));
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;
  RETURN jsonb_build_object('code', SQLSTATE, 'message', SQLERRM, 'detail', v_detail, 'hint', v_hint);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_chain_ok(p_chain jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  RETURN CASE
    WHEN jsonb_typeof(p_chain) <> 'array' THEN false
    ELSE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_chain) AS e(principal) WHERE jsonb_typeof(e.principal) <> 'string')
  END;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_day_of(p_period text, p_at_ms bigint)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN length(p_period) = 10 THEN p_period
    WHEN p_at_ms IS NULL OR p_at_ms NOT BETWEEN 0 AND 253402300799999 THEN NULL
    WHEN to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM') = p_period
      THEN to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')
  END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_dispatch(p_tenant text, p_run text, p_grant text, p_dispatch text, p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean, p_epoch bigint, p_lease_ms bigint, OUT outcome text, OUT run_status text, OUT last_epoch bigint, OUT pass_found boolean, OUT pass_settled_at_ms bigint, OUT chain_json text, OUT halts json, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint, OUT configured_counts bigint[], OUT configured_windows bigint[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_chain jsonb;
  v_check record;
  v_judged record;
BEGIN
  SELECT r.status, r.last_epoch, r.chain_json INTO run_status, last_epoch, v_chain
    FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  IF run_status IN ('concluded', 'released') THEN
    outcome := 'closed';
    RETURN;
  END IF;
  IF p_epoch IS NOT NULL THEN
    SELECT true, p.settled_at_ms INTO pass_found, pass_settled_at_ms
      FROM "quotaplane".quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
    pass_found := coalesce(pass_found, false);
    IF NOT pass_found OR p_epoch < last_epoch OR pass_settled_at_ms IS NOT NULL OR run_status = 'stranded' THEN
      outcome := 'fenced';
      RETURN;
    END IF;
  END IF;
  SELECT * INTO v_check FROM "quotaplane".quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  IF p_epoch IS NOT NULL AND p_lease_ms IS NOT NULL THEN
    UPDATE "quotaplane".quota_passes p
       SET lease_expires_at_ms = greatest(p.lease_expires_at_ms, least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint)
     WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
    UPDATE "quotaplane".quota_runs r SET status = 'running', status_since_ms = p_at_ms
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'withheld';
  END IF;
  SELECT coalesce(array_agg((e.ceiling ->> 'count')::numeric::bigint ORDER BY e.position), '{}'),
         coalesce(array_agg((e.ceiling ->> 'windowSeconds')::numeric::bigint ORDER BY e.position), '{}')
    INTO configured_counts, configured_windows
    FROM "quotaplane".quota_tenants t,
         jsonb_array_elements(t.quota_json -> 'rateCeilings' -> p_grant) WITH ORDINALITY AS e(ceiling, position)
   WHERE t.tenant = p_tenant;
  SELECT * INTO v_judged FROM "quotaplane".quota_reserve_rate(
    p_tenant, p_grant, p_run, p_dispatch,
    p_counts || configured_counts, p_windows || configured_windows, p_at_ms, p_exempt);
  outcome := v_judged.outcome;
  ceiling_index := v_judged.ceiling_index;
  reached := v_judged.reached;
  retry_at_ms := v_judged.retry_at_ms;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_first_grant(p_tenant text, p_run text, p_status text, OUT outcome text, OUT grant_period text, OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF p_status IN ('concluded', 'released') THEN
    outcome := 'closed';
    RETURN;
  END IF;
  SELECT p.period, p.hold_tokens, p.hold_minor_units, p.lease_expires_at_ms
    INTO grant_period, hold_tokens, hold_minor_units, lease_expires_at_ms
    FROM "quotaplane".quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = 1;
  outcome := CASE WHEN FOUND THEN 'existing' ELSE 'first-pass-missing' END;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_grant_queue(p_tenant text, p_at_ms bigint, p_limit integer, OUT granted integer, OUT stop text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_w record;
  v_a record;
  v_month text;
  v_day text;
BEGIN
  granted := 0;
  stop := 'empty';
  v_month := to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM');
  v_day := to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD');
  FOR v_w IN SELECT * FROM "quotaplane".quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting' ORDER BY w.seq LOOP
    IF granted >= p_limit THEN
      stop := 'limit';
      RETURN;
    END IF;
    IF v_w.lease_expires_at_ms <= p_at_ms THEN
      DELETE FROM "quotaplane".quota_waiters w WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END IF;
    IF EXISTS (SELECT 1 FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = v_w.run_id) THEN
      UPDATE "quotaplane".quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END IF;
    BEGIN
      SELECT * INTO v_a FROM "quotaplane".quota_admit(
        p_tenant, v_w.run_id, v_w.agent_name, v_w.agent_digest, v_w.chain_json, v_w.budget_json,
        v_w.max_tokens, v_w.max_call_tokens, v_w.max_minor_units, v_w.max_call_minor_units,
        v_w.width, p_at_ms, v_w.lease_ms, v_month, v_day, v_w.cover_keys,
        v_w.quota_given, v_w.given_max_runs, v_w.given_limit_tokens, v_w.given_limit_minor_units, v_w.given_period,
        v_w.given_agent_max_runs, v_w.given_agent_limit_tokens, v_w.given_agent_limit_minor_units);
    EXCEPTION WHEN OTHERS THEN
      -- Raised before any write of this admission (an amount beyond the bound): its caller hears it
      -- on collect.
      UPDATE "quotaplane".quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END;
    IF v_a.outcome = 'admitted' THEN
      UPDATE "quotaplane".quota_waiters w SET state = 'granted', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      granted := granted + 1;
    ELSIF v_a.outcome = 'too-many-runs' THEN
      -- Which ceiling bound it, narrowest first (core admissionConcurrencyRefusal).
      IF v_a.agent_max_runs IS NOT NULL AND v_a.agent_running >= v_a.agent_max_runs THEN
        CONTINUE;  -- its own agent's ceiling: the waiters behind it may still fit
      ELSIF v_a.max_runs IS NOT NULL AND v_a.running >= v_a.max_runs THEN
        stop := 'tenant-full';
        RETURN;
      ELSIF v_a.plane_agent_max_runs IS NOT NULL AND v_a.plane_agent_running >= v_a.plane_agent_max_runs THEN
        CONTINUE;  -- its agent's plane-wide ceiling: the same
      ELSE
        stop := 'plane-full';
        RETURN;
      END IF;
    ELSE
      UPDATE "quotaplane".quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
    END IF;
  END LOOP;
  IF granted >= p_limit THEN
    stop := 'limit';
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_grant_waiters(p_tenant text, p_at_ms bigint)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_granted integer := 0;
  v_plane_max bigint;
  v_weights jsonb;
  v_passed text[] := ARRAY[]::text[];
  v_next text;
  v_start bigint;
  v_plane_time bigint;
  v_weight bigint;
  v_q record;
BEGIN
  IF coalesce(current_setting('quotaplane.granting', true), '') = 'on' THEN
    RETURN 0;
  END IF;
  SELECT (p.ceiling_json ->> 'maxConcurrentRuns')::numeric::bigint, p.ceiling_json -> 'weights'
    INTO v_plane_max, v_weights FROM "quotaplane".quota_plane p WHERE p.id = 1;
  IF v_plane_max IS NULL THEN
    IF NOT EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting') THEN
      RETURN 0;
    END IF;
    PERFORM "quotaplane".quota_admission_lock(p_tenant);
    PERFORM set_config('quotaplane.granting', 'on', true);
    SELECT * INTO v_q FROM "quotaplane".quota_grant_queue(p_tenant, p_at_ms, 2147483647);
    v_granted := v_q.granted;
    PERFORM set_config('quotaplane.granting', 'off', true);
    IF v_granted > 0 THEN
      PERFORM pg_notify('quotaplane_waiters', '"quotaplane":' || p_tenant);
    END IF;
    RETURN v_granted;
  END IF;

  -- The plane-wide ceiling: every tenant with live waiters, in turn (start-time fair queueing).
  IF NOT EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.state = 'waiting' AND w.lease_expires_at_ms > p_at_ms) THEN
    RETURN 0;
  END IF;
  PERFORM set_config('quotaplane.granting', 'on', true);
  LOOP
    v_plane_time := coalesce((SELECT t.vtime FROM "quotaplane".quota_wait_turns t WHERE t.tenant = '*'), 0);
    SELECT w.tenant, greatest(coalesce(t.vtime, 0), v_plane_time) AS start INTO v_next, v_start
      FROM (SELECT DISTINCT w.tenant FROM "quotaplane".quota_waiters w
             WHERE w.state = 'waiting' AND w.lease_expires_at_ms > p_at_ms AND NOT (w.tenant = ANY (v_passed))) w
      LEFT JOIN "quotaplane".quota_wait_turns t ON t.tenant = w.tenant
     ORDER BY 2, 1
     LIMIT 1;
    EXIT WHEN v_next IS NULL;
    -- Another tenant's lock is only tried, never waited for: this transaction may hold the plane
    -- lock, which that tenant's own decisions take after theirs. A busy tenant is passed over.
    IF v_next <> p_tenant
       AND NOT pg_try_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(v_next) || ':' || v_next, 0)) THEN
      v_passed := v_passed || v_next;
      CONTINUE;
    END IF;
    IF v_next = p_tenant THEN
      PERFORM "quotaplane".quota_admission_lock(p_tenant);
    END IF;
    SELECT * INTO v_q FROM "quotaplane".quota_grant_queue(v_next, p_at_ms, 1);
    IF v_q.granted > 0 THEN
      v_granted := v_granted + 1;
      v_weight := greatest(1, coalesce((v_weights ->> v_next)::numeric::bigint, 1));
      INSERT INTO "quotaplane".quota_wait_turns AS t (tenant, vtime) VALUES (v_next, v_start + greatest(1, 1000000 / v_weight))
        ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
      INSERT INTO "quotaplane".quota_wait_turns AS t (tenant, vtime) VALUES ('*', v_start)
        ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
      PERFORM pg_notify('quotaplane_waiters', '"quotaplane":' || v_next);
      CONTINUE;
    END IF;
    EXIT WHEN v_q.stop = 'plane-full';
    v_passed := v_passed || v_next;
  END LOOP;
  PERFORM set_config('quotaplane.granting', 'off', true);
  RETURN v_granted;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_halt_row_ok(p_scope text, p_basis text, p_at_ms bigint)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT (p_scope = 'tenant'
          OR p_scope LIKE 'agent:_%'
          OR p_scope LIKE 'subject:_%'
          OR p_scope ~ '^revision:[0-9a-fA-F]{64}$')
     AND p_basis IN ('asserted', 'authenticated')
     AND p_at_ms BETWEEN -9007199254740991 AND 9007199254740991
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_heartbeat(p_tenant text, p_run text, p_epoch bigint, p_at_ms bigint, p_lease_ms bigint, OUT outcome text, OUT run_status text, OUT last_epoch bigint, OUT pass_found boolean, OUT pass_settled_at_ms bigint, OUT chain_json text, OUT halts json, OUT lease_expires_at_ms bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_chain jsonb;
  v_check record;
BEGIN
  SELECT r.status, r.last_epoch, r.chain_json INTO run_status, last_epoch, v_chain
    FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  SELECT true, p.settled_at_ms INTO pass_found, pass_settled_at_ms
    FROM "quotaplane".quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  pass_found := coalesce(pass_found, false);
  IF NOT pass_found OR run_status IN ('concluded', 'released') OR p_epoch < last_epoch
     OR pass_settled_at_ms IS NOT NULL OR run_status = 'stranded' THEN
    outcome := 'fenced';
    RETURN;
  END IF;
  SELECT * INTO v_check FROM "quotaplane".quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  UPDATE "quotaplane".quota_passes p
     SET lease_expires_at_ms = greatest(p.lease_expires_at_ms, least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint)
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch
   RETURNING p.lease_expires_at_ms INTO lease_expires_at_ms;
  UPDATE "quotaplane".quota_runs r SET status = 'running', status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'withheld';
  outcome := 'renewed';
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_held_move_counted(p_tenant text, p_period text, p_day text, p_tokens numeric, p_minor_units numeric, p_agent text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_month text := left(p_period, 7);
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period WHEN left(p_day, 7) = p_period THEN p_day END;
  v_row record;
BEGIN
  IF p_tokens = 0 AND p_minor_units = 0 THEN
    RETURN;
  END IF;
  IF p_tokens <= 0 AND p_minor_units <= 0 THEN
    UPDATE "quotaplane".quota_spent
       SET held_tokens = held_tokens + p_tokens, held_minor_units = held_minor_units + p_minor_units
     WHERE tenant = p_tenant AND period IN (v_month, v_day);
  ELSE
    FOR v_row IN
      INSERT INTO "quotaplane".quota_spent AS q (tenant, period, tokens, minor_units, held_tokens, held_minor_units)
        SELECT p_tenant, k.period, 0, 0, p_tokens, p_minor_units
          FROM (VALUES (1, v_month), (2, v_day)) AS k(position, period)
         WHERE k.period IS NOT NULL ORDER BY k.position
        ON CONFLICT (tenant, period) DO UPDATE SET
          held_tokens = q.held_tokens + excluded.held_tokens,
          held_minor_units = q.held_minor_units + excluded.held_minor_units
        RETURNING q.period, q.held_tokens, q.held_minor_units
    LOOP
      -- quota_require_fits only when it raises (a call is a statement of its own).
      IF v_row.held_tokens > 9007199254740991 THEN
        PERFORM "quotaplane".quota_require_fits('hold.tokens', 'the holds of period ' || v_row.period || ' (tokens)',
                                        v_row.held_tokens - greatest(p_tokens, 0), greatest(p_tokens, 0));
      END IF;
      IF v_row.held_minor_units > 9007199254740991 THEN
        PERFORM "quotaplane".quota_require_fits('hold.minorUnits', 'the holds of period ' || v_row.period || ' (minor units)',
                                        v_row.held_minor_units - greatest(p_minor_units, 0), greatest(p_minor_units, 0));
      END IF;
    END LOOP;
  END IF;
  IF p_agent IS NOT NULL THEN
    PERFORM "quotaplane".quota_agent_held_move(p_tenant, p_agent, v_month, p_tokens, p_minor_units);
    IF v_day IS NOT NULL THEN
      PERFORM "quotaplane".quota_agent_held_move(p_tenant, p_agent, v_day, p_tokens, p_minor_units);
    END IF;
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_hold_carry(p_tenant text, p_run text, p_period text, p_day text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_old record;
  v_day text;
BEGIN
  SELECT period, day, tokens, minor_units, agent_name INTO v_old FROM "quotaplane".quota_reserved
   WHERE tenant = p_tenant AND run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- The day it now counts in: a day period is its own; else the day given (a resume's), else the
  -- hold's own day when it lies in the new month.
  v_day := CASE WHEN length(p_period) = 10 THEN p_period WHEN p_day IS NOT NULL THEN p_day
                WHEN left(v_old.day, 7) = p_period THEN v_old.day END;
  IF v_old.period = p_period AND v_old.day IS NOT DISTINCT FROM v_day THEN
    RETURN;
  END IF;
  UPDATE "quotaplane".quota_reserved SET period = p_period, day = v_day WHERE tenant = p_tenant AND run_id = p_run;
  -- Both periods' rows in one (sorted) order, so two carries in opposite directions cannot
  -- deadlock.
  IF v_old.period < p_period THEN
    PERFORM "quotaplane".quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
    PERFORM "quotaplane".quota_held_move_counted(p_tenant, p_period, v_day, v_old.tokens, v_old.minor_units, v_old.agent_name);
  ELSE
    PERFORM "quotaplane".quota_held_move_counted(p_tenant, p_period, v_day, v_old.tokens, v_old.minor_units, v_old.agent_name);
    PERFORM "quotaplane".quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_hold_drop(p_tenant text, p_run text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_old record;
BEGIN
  DELETE FROM "quotaplane".quota_reserved WHERE tenant = p_tenant AND run_id = p_run
    RETURNING period, day, tokens, minor_units, agent_name INTO v_old;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM "quotaplane".quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
  RETURN true;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_hold_put(p_tenant text, p_run text, p_period text, p_tokens bigint, p_minor_units bigint, p_day text DEFAULT NULL::text, p_agent text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period ELSE p_day END;
BEGIN
  INSERT INTO "quotaplane".quota_reserved (tenant, run_id, period, day, tokens, minor_units, agent_name)
    VALUES (p_tenant, p_run, p_period, v_day, p_tokens, p_minor_units, p_agent);
  PERFORM "quotaplane".quota_held_move_counted(p_tenant, p_period, v_day, p_tokens, p_minor_units, p_agent);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_hold_shrink(p_tenant text, p_run text, p_tokens bigint, p_minor_units bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_old record;
BEGIN
  SELECT period, day, tokens, minor_units, agent_name INTO v_old FROM "quotaplane".quota_reserved
   WHERE tenant = p_tenant AND run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  UPDATE "quotaplane".quota_reserved
     SET tokens = greatest(tokens - p_tokens, 0), minor_units = greatest(minor_units - p_minor_units, 0)
   WHERE tenant = p_tenant AND run_id = p_run;
  PERFORM "quotaplane".quota_held_move_counted(p_tenant, v_old.period, v_old.day,
    greatest(v_old.tokens - p_tokens, 0)::numeric - v_old.tokens,
    greatest(v_old.minor_units - p_minor_units, 0)::numeric - v_old.minor_units, v_old.agent_name);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_json_agents_ok(p_agents jsonb, p_fields text[])
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN p_agents IS NULL OR jsonb_typeof(p_agents) = 'null' THEN true
    WHEN jsonb_typeof(p_agents) <> 'object' THEN false
    ELSE NOT EXISTS (
      SELECT 1 FROM jsonb_each(p_agents) AS a(agent, ceilings)
       WHERE CASE
               WHEN jsonb_typeof(a.ceilings) <> 'object' THEN true
               ELSE EXISTS (SELECT 1 FROM jsonb_each(a.ceilings) AS c(name, ceiling)
                             WHERE NOT (c.name = ANY (p_fields)) OR NOT "quotaplane".quota_json_amount_ok(c.ceiling, false))
             END)
  END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_json_amount_ok(p_value jsonb, p_required boolean)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN NOT p_required
    WHEN jsonb_typeof(p_value) = 'number' THEN
      (p_value #>> '{}')::numeric BETWEEN 0 AND 9007199254740991 AND (p_value #>> '{}')::numeric % 1 = 0
    ELSE false
  END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_json_ceilings_ok(p_ceilings jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN jsonb_typeof(p_ceilings) <> 'array' THEN false
    ELSE NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(p_ceilings) AS c(ceiling)
       WHERE CASE
               WHEN jsonb_typeof(c.ceiling) <> 'object' THEN true
               ELSE NOT ("quotaplane".quota_json_amount_ok(c.ceiling -> 'count', true)
                         AND "quotaplane".quota_json_amount_ok(c.ceiling -> 'windowSeconds', true))
             END)
  END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_json_ok(p_quota jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN jsonb_typeof(p_quota) <> 'object' THEN false
    ELSE NOT EXISTS (
           SELECT 1 FROM jsonb_object_keys(p_quota) AS k(name)
            WHERE k.name NOT IN ('maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod', 'period', 'rateCeilings',
                                 'agents'))
     AND "quotaplane".quota_json_amount_ok(p_quota -> 'maxConcurrentRuns', false)
     AND "quotaplane".quota_json_amount_ok(p_quota -> 'maxTokensPerPeriod', false)
     AND "quotaplane".quota_json_amount_ok(p_quota -> 'maxMinorUnitsPerPeriod', false)
     AND CASE
           WHEN p_quota -> 'period' IS NULL OR jsonb_typeof(p_quota -> 'period') = 'null' THEN true
           WHEN jsonb_typeof(p_quota -> 'period') <> 'string' THEN false
           ELSE p_quota ->> 'period' IN ('monthly', 'daily')
         END
     AND CASE
           WHEN p_quota -> 'rateCeilings' IS NULL OR jsonb_typeof(p_quota -> 'rateCeilings') = 'null' THEN true
           WHEN jsonb_typeof(p_quota -> 'rateCeilings') <> 'object' THEN false
           ELSE NOT EXISTS (
             SELECT 1 FROM jsonb_each(p_quota -> 'rateCeilings') AS g(grant_ref, ceilings)
              WHERE NOT "quotaplane".quota_json_ceilings_ok(g.ceilings))
         END
     AND "quotaplane".quota_json_agents_ok(p_quota -> 'agents',
           ARRAY['maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod'])
  END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_judge_rate(p_tenant text, p_grant text, p_counts bigint[], p_windows bigint[], p_at_ms bigint, OUT outcome text, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_n integer := coalesce(array_length(p_windows, 1), 0);
  v_latest bigint;
  v_boundary bigint;
  v_first bigint;
  v_window_ms bigint;
BEGIN
  outcome := 'ok';
  FOR i IN 1 .. v_n LOOP
    IF p_windows[i] < 1 OR p_windows[i] > 2678400 THEN
      outcome := 'uncountable';
      ceiling_index := i;
      RETURN;
    END IF;
  END LOOP;
  IF v_n = 0 THEN
    RETURN;
  END IF;
  SELECT g.last_ordinal INTO v_latest FROM "quotaplane".quota_rate_grants g WHERE g.tenant = p_tenant AND g.grant_ref = p_grant;
  v_latest := coalesce(v_latest, 0);
  retry_at_ms := p_at_ms;
  FOR i IN 1 .. v_n LOOP
    v_window_ms := p_windows[i] * 1000;
    v_boundary := NULL;
    IF p_counts[i] = 0 THEN
      IF ceiling_index IS NULL THEN ceiling_index := i; END IF;
      retry_at_ms := greatest(retry_at_ms, p_at_ms + v_window_ms);
      CONTINUE;
    END IF;
    IF v_latest - p_counts[i] + 1 >= 1 THEN
      SELECT r.reserved_at_ms INTO v_boundary FROM "quotaplane".quota_rate r
       WHERE r.tenant = p_tenant AND r.grant_ref = p_grant AND r.ordinal = v_latest - p_counts[i] + 1;
    END IF;
    IF v_boundary IS NOT NULL AND v_boundary > p_at_ms - v_window_ms THEN
      IF ceiling_index IS NULL THEN ceiling_index := i; END IF;
      retry_at_ms := greatest(retry_at_ms, v_boundary + v_window_ms);
    END IF;
  END LOOP;
  IF ceiling_index IS NULL THEN
    retry_at_ms := NULL;
    RETURN;
  END IF;
  outcome := 'limited';
  SELECT r.ordinal INTO v_first FROM "quotaplane".quota_rate r
   WHERE r.tenant = p_tenant AND r.grant_ref = p_grant AND r.reserved_at_ms > p_at_ms - p_windows[ceiling_index] * 1000
   ORDER BY r.reserved_at_ms, r.ordinal LIMIT 1;
  reached := CASE WHEN v_first IS NULL THEN 0 ELSE v_latest - v_first + 1 END;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_plane_json_ok(p_plane jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE
    WHEN jsonb_typeof(p_plane) <> 'object' THEN false
    ELSE NOT EXISTS (
           SELECT 1 FROM jsonb_object_keys(p_plane) AS k(name)
            WHERE k.name NOT IN ('maxConcurrentRuns', 'agents', 'weights'))
     AND "quotaplane".quota_json_amount_ok(p_plane -> 'maxConcurrentRuns', false)
     AND "quotaplane".quota_json_agents_ok(p_plane -> 'agents', ARRAY['maxConcurrentRuns'])
     AND CASE
           WHEN p_plane -> 'weights' IS NULL OR jsonb_typeof(p_plane -> 'weights') = 'null' THEN true
           WHEN jsonb_typeof(p_plane -> 'weights') <> 'object' THEN false
           ELSE NOT EXISTS (
             SELECT 1 FROM jsonb_each(p_plane -> 'weights') AS w(tenant, weight)
              WHERE CASE WHEN "quotaplane".quota_json_amount_ok(w.weight, true) THEN (w.weight #>> '{}')::numeric < 1 ELSE true END)
         END
  END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_plane_lock()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-plane', 3));
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_receipt_apply(p_tenant text, p_run text, p_period text, p_day text, p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean, p_agent text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period WHEN left(p_day, 7) = p_period THEN p_day END;
BEGIN
  IF p_concludes THEN
    PERFORM "quotaplane".quota_hold_drop(p_tenant, p_run);
  ELSE
    PERFORM "quotaplane".quota_hold_shrink(p_tenant, p_run, p_tokens, p_minor_units);
  END IF;
  -- What a day settled also counts in its month (docs/design/rules.md#l80): month row first, then
  -- the day's.
  IF p_period IS NOT NULL THEN
    PERFORM "quotaplane".quota_accrue(p_tenant, left(p_period, 7), v_day, p_tokens, p_minor_units);
    IF p_agent IS NOT NULL THEN
      PERFORM "quotaplane".quota_agent_accrue(p_tenant, p_agent, left(p_period, 7), p_tokens, p_minor_units);
      IF v_day IS NOT NULL THEN
        PERFORM "quotaplane".quota_agent_accrue(p_tenant, p_agent, v_day, p_tokens, p_minor_units);
      END IF;
    END IF;
  END IF;
  IF p_release_slot THEN
    PERFORM "quotaplane".quota_slot_give(p_tenant, p_run);
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_requeue_lapsed_grant(p_tenant text, p_run text, p_at_ms bigint, p_lease_expires_at_ms bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM "quotaplane".quota_waiters w
      JOIN "quotaplane".quota_runs r ON r.tenant = w.tenant AND r.run_id = w.run_id
      LEFT JOIN "quotaplane".quota_passes p ON p.tenant = w.tenant AND p.run_id = w.run_id AND p.epoch = 1
     WHERE w.tenant = p_tenant AND w.run_id = p_run AND w.state = 'granted'
       AND (r.status = 'stranded' OR (r.status = 'running' AND p.lease_expires_at_ms <= p_at_ms))) THEN
    RETURN false;
  END IF;
  PERFORM "quotaplane".quota_withdraw_grant(p_tenant, p_run);
  UPDATE "quotaplane".quota_waiters SET state = 'waiting', decided_at_ms = NULL,
         lease_expires_at_ms = greatest(lease_expires_at_ms, p_lease_expires_at_ms)
   WHERE tenant = p_tenant AND run_id = p_run;
  RETURN true;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_require_fits(p_field text, p_what text, p_total numeric, p_adding numeric)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF coalesce(p_total, 0) + coalesce(p_adding, 0) > 9007199254740991 THEN
    RAISE EXCEPTION USING ERRCODE = 'QP001', MESSAGE = p_field, DETAIL = p_what,
      HINT = coalesce(p_total, 0)::text || ' ' || coalesce(p_adding, 0)::text;
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_reserve(p_tenant text, p_run text, p_max_runs bigint, p_hold_period text, p_hold_tokens bigint, p_hold_minor_units bigint, p_limit_tokens bigint, p_limit_minor_units bigint, p_at_ms bigint, p_agent text DEFAULT NULL::text, p_agent_max_runs bigint DEFAULT NULL::bigint, p_agent_limit_tokens bigint DEFAULT NULL::bigint, p_agent_limit_minor_units bigint DEFAULT NULL::bigint, OUT outcome text, OUT running bigint, OUT settled_tokens bigint, OUT settled_minor_units bigint, OUT reserved_tokens bigint, OUT reserved_minor_units bigint, OUT agent_running bigint, OUT plane_running bigint, OUT plane_agent_running bigint, OUT plane_max_runs bigint, OUT plane_agent_max_runs bigint, OUT agent_settled_tokens bigint, OUT agent_settled_minor_units bigint, OUT agent_reserved_tokens bigint, OUT agent_reserved_minor_units bigint, OUT hold_taken boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_slot_held boolean;
  v_hold_held boolean;
  v_plane jsonb;
BEGIN
  outcome := 'ok';
  -- Whether this call inserted the hold asked for (then it is the run's hold): quota_admit reports
  -- it without reading it back.
  hold_taken := false;
  -- The plane-wide ceilings covering this run: the plane's, and the plane's for its agent.
  SELECT p.ceiling_json INTO v_plane FROM "quotaplane".quota_plane p WHERE p.id = 1;
  plane_max_runs := (v_plane ->> 'maxConcurrentRuns')::numeric::bigint;
  IF p_agent IS NOT NULL THEN
    plane_agent_max_runs := (v_plane -> 'agents' -> p_agent ->> 'maxConcurrentRuns')::numeric::bigint;
  END IF;
  -- A waiting admission's spend probe (postgres-waiters.ts) decides spend with every concurrency
  -- ceiling lifted: the tenant's and the agent's come lifted in its quota, the plane's here.
  IF v_plane IS NOT NULL AND current_setting('quotaplane.spend_probe', true) = 'on' THEN
    plane_max_runs := NULL;
    plane_agent_max_runs := NULL;
  END IF;
  -- Fast path: no concurrency ceiling covering the run and no hold leave nothing to decide.
  IF p_max_runs IS NULL AND p_hold_period IS NULL AND p_agent_max_runs IS NULL
     AND plane_max_runs IS NULL AND plane_agent_max_runs IS NULL THEN
    PERFORM "quotaplane".quota_slot_take(p_tenant, p_run, p_at_ms, p_agent);
    RETURN;
  END IF;
  -- quota_admission_lock's key, inline (a call is a statement of its own; in a batch it is held
  -- already).
  PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
  -- Lock order: the tenant's lock, then the plane's (a batch takes all its tenants' locks first).
  IF plane_max_runs IS NOT NULL OR plane_agent_max_runs IS NOT NULL THEN
    PERFORM "quotaplane".quota_plane_lock();
  END IF;
  -- Point reads only: the slot set's size and the period's figures are counters.
  SELECT EXISTS (SELECT 1 FROM "quotaplane".quota_running WHERE tenant = p_tenant AND run_id = p_run),
         EXISTS (SELECT 1 FROM "quotaplane".quota_reserved WHERE tenant = p_tenant AND run_id = p_run),
         coalesce((SELECT f.running FROM "quotaplane".quota_figures f WHERE f.tenant = p_tenant), 0)
    INTO v_slot_held, v_hold_held, running;
  -- A run holding a slot is never counted against a ceiling; each is compared once, after counting,
  -- narrowest first (core admissionConcurrencyRefusal): agent, tenant, plane-agent, plane.
  IF NOT v_slot_held THEN
    IF p_agent IS NOT NULL AND p_agent_max_runs IS NOT NULL THEN
      agent_running := coalesce((SELECT a.running FROM "quotaplane".quota_agent_figures a
                                  WHERE a.tenant = p_tenant AND a.agent_name = p_agent), 0);
      IF agent_running >= p_agent_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
    IF p_max_runs IS NOT NULL AND running >= p_max_runs THEN
      outcome := 'too-many-runs';
      RETURN;
    END IF;
    -- Plane-wide counts: sums of the per-tenant counters, read under the plane lock. Every slot a
    -- covered admission takes is taken under that lock; a slot given back meanwhile and not yet
    -- committed is still counted, which errs toward refusing, never beyond the ceiling.
    IF plane_agent_max_runs IS NOT NULL THEN
      plane_agent_running := coalesce((SELECT sum(a.running) FROM "quotaplane".quota_agent_figures a WHERE a.agent_name = p_agent), 0);
      IF plane_agent_running >= plane_agent_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
    IF plane_max_runs IS NOT NULL THEN
      plane_running := coalesce((SELECT sum(f.running) FROM "quotaplane".quota_figures f), 0);
      IF plane_running >= plane_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
  END IF;
  -- A run that already holds spend is neither re-checked nor re-held: the existing hold wins.
  IF p_hold_period IS NOT NULL AND NOT v_hold_held THEN
    -- The agent's figures first (core admissionSpendRefusal), from one row, so one snapshot.
    IF p_agent IS NOT NULL AND (p_agent_limit_tokens IS NOT NULL OR p_agent_limit_minor_units IS NOT NULL) THEN
      SELECT q.tokens, q.minor_units,
             least(q.held_tokens, 9007199254740991)::bigint, least(q.held_minor_units, 9007199254740991)::bigint
        INTO agent_settled_tokens, agent_settled_minor_units, agent_reserved_tokens, agent_reserved_minor_units
        FROM "quotaplane".quota_agent_spent q WHERE q.tenant = p_tenant AND q.agent_name = p_agent AND q.period = p_hold_period;
      agent_settled_tokens := coalesce(agent_settled_tokens, 0);
      agent_settled_minor_units := coalesce(agent_settled_minor_units, 0);
      agent_reserved_tokens := coalesce(agent_reserved_tokens, 0);
      agent_reserved_minor_units := coalesce(agent_reserved_minor_units, 0);
      IF (p_agent_limit_tokens IS NOT NULL
            AND agent_settled_tokens::numeric + agent_reserved_tokens + p_hold_tokens > p_agent_limit_tokens)
         OR (p_agent_limit_minor_units IS NOT NULL
            AND agent_settled_minor_units::numeric + agent_reserved_minor_units + p_hold_minor_units > p_agent_limit_minor_units) THEN
        outcome := 'spent-out';
        RETURN;
      END IF;
    END IF;
    -- Settled and reserved from one row, so one snapshot.
    SELECT q.tokens, q.minor_units,
           least(q.held_tokens, 9007199254740991)::bigint, least(q.held_minor_units, 9007199254740991)::bigint
      INTO settled_tokens, settled_minor_units, reserved_tokens, reserved_minor_units
      FROM "quotaplane".quota_spent q WHERE q.tenant = p_tenant AND q.period = p_hold_period;
    settled_tokens := coalesce(settled_tokens, 0);
    settled_minor_units := coalesce(settled_minor_units, 0);
    reserved_tokens := coalesce(reserved_tokens, 0);
    reserved_minor_units := coalesce(reserved_minor_units, 0);
    IF (p_limit_tokens IS NOT NULL
          AND settled_tokens::numeric + reserved_tokens + p_hold_tokens > p_limit_tokens)
       OR (p_limit_minor_units IS NOT NULL
          AND settled_minor_units::numeric + reserved_minor_units + p_hold_minor_units > p_limit_minor_units) THEN
      outcome := 'spent-out';
      RETURN;
    END IF;
    PERFORM "quotaplane".quota_hold_put(p_tenant, p_run, p_hold_period, p_hold_tokens, p_hold_minor_units,
                                "quotaplane".quota_day_of(p_hold_period, p_at_ms), p_agent);
    hold_taken := true;
  END IF;
  PERFORM "quotaplane".quota_slot_take(p_tenant, p_run, p_at_ms, p_agent);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_reserve_rate(p_tenant text, p_grant text, p_run text, p_dispatch text, p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean, OUT outcome text, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_last_ordinal bigint;
  v_last_at_ms bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(
    '"quotaplane".quota-rate:' || octet_length(p_tenant) || ':' || p_tenant || ':' || octet_length(p_grant) || ':' || p_grant, 1));
  PERFORM 1 FROM "quotaplane".quota_rate
   WHERE tenant = p_tenant AND grant_ref = p_grant AND run_id = p_run AND dispatch = p_dispatch;
  IF FOUND THEN
    outcome := 'present';
    RETURN;
  END IF;
  DELETE FROM "quotaplane".quota_rate
   WHERE tenant = p_tenant AND grant_ref = p_grant AND reserved_at_ms <= p_at_ms - 2678400000;
  outcome := 'ok';
  IF NOT p_exempt THEN
    SELECT j.outcome, j.ceiling_index, j.reached, j.retry_at_ms INTO outcome, ceiling_index, reached, retry_at_ms
      FROM "quotaplane".quota_judge_rate(p_tenant, p_grant, p_counts, p_windows, p_at_ms) j;
    IF outcome <> 'ok' THEN
      RETURN;
    END IF;
  END IF;
  SELECT g.last_ordinal, g.last_at_ms INTO v_last_ordinal, v_last_at_ms
    FROM "quotaplane".quota_rate_grants g WHERE g.tenant = p_tenant AND g.grant_ref = p_grant;
  v_last_ordinal := coalesce(v_last_ordinal, 0) + 1;
  v_last_at_ms := greatest(p_at_ms, coalesce(v_last_at_ms, p_at_ms));
  INSERT INTO "quotaplane".quota_rate (tenant, grant_ref, ordinal, run_id, dispatch, reserved_at_ms)
    VALUES (p_tenant, p_grant, v_last_ordinal, p_run, p_dispatch, v_last_at_ms);
  INSERT INTO "quotaplane".quota_rate_grants AS g (tenant, grant_ref, last_ordinal, last_at_ms)
    VALUES (p_tenant, p_grant, v_last_ordinal, v_last_at_ms)
    ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_resume(p_tenant text, p_run text, p_at_ms bigint, p_lease_ms bigint, p_month_key text, p_day_key text, OUT outcome text, OUT run_status text, OUT chain_json text, OUT halts json, OUT grant_epoch bigint, OUT grant_period text, OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_chain jsonb;
  v_check record;
BEGIN
  SELECT r.status, r.chain_json INTO run_status, v_chain
    FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  IF run_status IN ('concluded', 'released') THEN
    outcome := 'closed';
    RETURN;
  END IF;
  SELECT * INTO v_check FROM "quotaplane".quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  SELECT CASE WHEN coalesce(t.quota_json ->> 'period', 'monthly') = 'daily' THEN p_day_key ELSE p_month_key END
    INTO grant_period FROM "quotaplane".quota_tenants t WHERE t.tenant = p_tenant;
  grant_period := coalesce(grant_period, p_month_key);
  PERFORM "quotaplane".quota_hold_carry(p_tenant, p_run, grant_period, p_day_key);
  UPDATE "quotaplane".quota_runs r SET status = 'running', last_epoch = r.last_epoch + 1, status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run
   RETURNING r.last_epoch INTO grant_epoch;
  SELECT q.tokens, q.minor_units INTO hold_tokens, hold_minor_units
    FROM "quotaplane".quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint;
  INSERT INTO "quotaplane".quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, grant_epoch, grant_period, false, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'resumed';
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_same_receipt(p_period text, p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean, p_stored_period text, p_stored_tokens bigint, p_stored_minor_units bigint, p_stored_release_slot boolean, p_stored_concludes boolean)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT p_stored_period IS NOT DISTINCT FROM p_period AND p_stored_tokens = p_tokens AND p_stored_minor_units = p_minor_units
     AND p_stored_release_slot = p_release_slot AND p_stored_concludes = p_concludes
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_settle(p_tenant text, p_run text, p_epoch bigint, p_period text, p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean, p_day text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_same boolean;
  v_agent text;
  v_pass_period text;
  v_pass_takes_slot boolean;
  v_own_tokens bigint;
  v_own_minor_units bigint;
  v_own_concludes boolean;
BEGIN
  -- A receipt a prune removed is never written again as if new (docs/design/rules.md#r3).
  IF EXISTS (SELECT 1 FROM "quotaplane".quota_pruned x WHERE x.tenant = p_tenant AND x.run_id = p_run) THEN
    RETURN 'pruned';
  END IF;
  -- A registered run is locked first, as quota_settle_pass locks it, so this settle and the pass's
  -- own settle of the same pass take turns, and the later one finds the earlier one's receipt.
  SELECT r.agent_name INTO v_agent FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  -- The pass is read by a statement of its own, after the lock. Had it been joined to the locking
  -- read, a wait for the lock would hand back the run row as committed meanwhile but the pass row
  -- as it stood when that read began: the receipt the lock holder just wrote would be missed, and
  -- the pass settled twice.
  IF FOUND THEN
    SELECT p.period, p.takes_slot, p.receipt_tokens, p.receipt_minor_units, p.receipt_concludes
      INTO v_pass_period, v_pass_takes_slot, v_own_tokens, v_own_minor_units, v_own_concludes
      FROM "quotaplane".quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  END IF;
  IF v_own_tokens IS NOT NULL THEN
    RETURN CASE WHEN "quotaplane".quota_same_receipt(p_period, p_tokens, p_minor_units, p_release_slot, p_concludes,
                       v_pass_period, v_own_tokens, v_own_minor_units, v_pass_takes_slot, v_own_concludes)
                THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  INSERT INTO "quotaplane".quota_settled (tenant, run_id, epoch, period, tokens, minor_units, release_slot, concludes)
    VALUES (p_tenant, p_run, p_epoch, p_period, p_tokens, p_minor_units, p_release_slot, p_concludes)
    ON CONFLICT (tenant, run_id, epoch) DO NOTHING;
  IF NOT FOUND THEN
    SELECT "quotaplane".quota_same_receipt(p_period, p_tokens, p_minor_units, p_release_slot, p_concludes,
                                   r.period, r.tokens, r.minor_units, r.release_slot, r.concludes)
      INTO v_same
      FROM "quotaplane".quota_settled r WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.epoch = p_epoch;
    RETURN CASE WHEN v_same THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  PERFORM "quotaplane".quota_receipt_apply(p_tenant, p_run, p_period, p_day, p_tokens, p_minor_units, p_release_slot, p_concludes, v_agent);
  RETURN 'settled';
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_settle_pass(p_tenant text, p_run text, p_epoch bigint, p_tokens bigint, p_minor_units bigint, p_concludes boolean, p_at_ms bigint, OUT outcome text, OUT receipt_period text, OUT receipt_release_slot boolean, OUT pass_hold_tokens bigint, OUT pass_hold_minor_units bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_started_at_ms bigint;
  v_status text;
  v_agent text;
  v_next text;
  v_stored_period text;
  v_stored_tokens bigint;
  v_stored_minor_units bigint;
  v_stored_release_slot boolean;
  v_stored_concludes boolean;
  v_pruned boolean;
BEGIN
  SELECT r.status, r.agent_name INTO v_status, v_agent
    FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  -- The pass's receipt is its own (receipt_*) or the port's (x), never both: the stored one is
  -- whichever is there.
  SELECT p.period, p.takes_slot, p.started_at_ms, p.hold_tokens, p.hold_minor_units,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.period ELSE x.period END,
         coalesce(p.receipt_tokens, x.tokens),
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_minor_units ELSE x.minor_units END,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.takes_slot ELSE x.release_slot END,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_concludes ELSE x.concludes END,
         EXISTS (SELECT 1 FROM "quotaplane".quota_pruned z WHERE z.tenant = p.tenant AND z.run_id = p.run_id)
    INTO receipt_period, receipt_release_slot, v_started_at_ms, pass_hold_tokens, pass_hold_minor_units,
         v_stored_period, v_stored_tokens, v_stored_minor_units, v_stored_release_slot, v_stored_concludes,
         v_pruned
    FROM "quotaplane".quota_passes p
    LEFT JOIN "quotaplane".quota_settled x ON x.tenant = p.tenant AND x.run_id = p.run_id AND x.epoch = p.epoch
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  IF NOT FOUND THEN
    outcome := 'not-found';
    RETURN;
  END IF;
  IF v_status IS NULL THEN
    outcome := 'run-missing';
    RETURN;
  END IF;
  IF v_stored_tokens IS NOT NULL THEN
    outcome := CASE WHEN "quotaplane".quota_same_receipt(receipt_period, p_tokens, p_minor_units, receipt_release_slot, p_concludes,
                           v_stored_period, v_stored_tokens, v_stored_minor_units, v_stored_release_slot, v_stored_concludes)
                    THEN 'already-settled' ELSE 'conflict' END;
    RETURN;
  END IF;
  -- A receipt a prune removed is never written again as if new (docs/design/rules.md#r3).
  IF v_pruned THEN
    outcome := 'pruned';
    RETURN;
  END IF;
  PERFORM "quotaplane".quota_receipt_apply(p_tenant, p_run, receipt_period, "quotaplane".quota_day_of(receipt_period, v_started_at_ms),
                                   p_tokens, p_minor_units, receipt_release_slot, p_concludes, v_agent);
  UPDATE "quotaplane".quota_passes p
     SET settled_at_ms = p_at_ms, receipt_tokens = p_tokens, receipt_minor_units = p_minor_units, receipt_concludes = p_concludes
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  v_next := CASE
    WHEN v_status = 'released' THEN 'released'
    WHEN p_concludes THEN 'concluded'
    WHEN v_status = 'withheld' THEN 'withheld'
    ELSE 'paused'
  END;
  UPDATE "quotaplane".quota_runs r SET status = v_next, status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.last_epoch = p_epoch AND r.status <> v_next;
  -- The slot this pass gives back goes to the tenant's waiters in this transaction.
  IF receipt_release_slot AND (EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM "quotaplane".quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL)) THEN
    PERFORM "quotaplane".quota_grant_waiters(p_tenant, p_at_ms);
  END IF;
  outcome := 'settled';
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_slot_give(p_tenant text, p_run text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_agent text;
BEGIN
  DELETE FROM "quotaplane".quota_running WHERE tenant = p_tenant AND run_id = p_run RETURNING agent_name INTO v_agent;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE "quotaplane".quota_figures SET running = running - 1 WHERE tenant = p_tenant;
  IF v_agent IS NOT NULL THEN
    UPDATE "quotaplane".quota_agent_figures SET running = running - 1 WHERE tenant = p_tenant AND agent_name = v_agent;
  END IF;
  RETURN true;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_slot_take(p_tenant text, p_run text, p_at_ms bigint, p_agent text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO "quotaplane".quota_running (tenant, run_id, admitted_at_ms, agent_name) VALUES (p_tenant, p_run, p_at_ms, p_agent)
    ON CONFLICT (tenant, run_id) DO NOTHING;
  IF FOUND THEN
    INSERT INTO "quotaplane".quota_figures AS f (tenant, running) VALUES (p_tenant, 1)
      ON CONFLICT (tenant) DO UPDATE SET running = f.running + 1;
    IF p_agent IS NOT NULL THEN
      INSERT INTO "quotaplane".quota_agent_figures AS a (tenant, agent_name, running) VALUES (p_tenant, p_agent, 1)
        ON CONFLICT (tenant, agent_name) DO UPDATE SET running = a.running + 1;
    END IF;
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_sweep_run(p_tenant text, p_run text, p_at_ms bigint, OUT released_slot boolean, OUT stranded boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
BEGIN
  released_slot := false;
  stranded := false;
  PERFORM 1 FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM "quotaplane".quota_passes p
              WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms > p_at_ms) THEN
    RETURN;
  END IF;
  -- A waiter's grant that lapsed uncollected: withdrawn whole, the waiter back in its place, and
  -- the room served again (that waiter first, if its own lease still runs).
  released_slot := EXISTS (SELECT 1 FROM "quotaplane".quota_running WHERE tenant = p_tenant AND run_id = p_run);
  IF "quotaplane".quota_requeue_lapsed_grant(p_tenant, p_run, p_at_ms, 0) THEN
    PERFORM "quotaplane".quota_grant_waiters(p_tenant, p_at_ms);
    RETURN;
  END IF;
  released_slot := "quotaplane".quota_slot_give(p_tenant, p_run);
  UPDATE "quotaplane".quota_runs r SET status = 'stranded',
         status_since_ms = coalesce((SELECT p.lease_expires_at_ms FROM "quotaplane".quota_passes p
                                      WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = r.last_epoch),
                                    r.status_since_ms)
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'running';
  stranded := FOUND;
  IF released_slot AND (EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM "quotaplane".quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL)) THEN
    PERFORM "quotaplane".quota_grant_waiters(p_tenant, p_at_ms);
  END IF;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_withdraw_grant(p_tenant text, p_run text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM 1 FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  PERFORM "quotaplane".quota_hold_drop(p_tenant, p_run);
  PERFORM "quotaplane".quota_slot_give(p_tenant, p_run);
  DELETE FROM "quotaplane".quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run;
  DELETE FROM "quotaplane".quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_withhold_check(p_tenant text, p_run text, p_chain jsonb, p_at_ms bigint, OUT verdict text, OUT halts json)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_unreadable boolean;
  v_covering boolean;
BEGIN
  verdict := 'clear';
  SELECT coalesce(bool_or(NOT "quotaplane".quota_halt_row_ok(h.scope, h.by_basis, h.at_ms)), false),
         coalesce(bool_or(p_chain IS NOT NULL AND h.scope LIKE 'subject:_%' AND p_chain ? substr(h.scope, 9)), false)
    INTO v_unreadable, v_covering
    FROM "quotaplane".quota_halted h WHERE h.tenant = p_tenant;
  IF v_unreadable THEN
    verdict := 'unreadable-halts';
    halts := (SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      FROM "quotaplane".quota_halted h WHERE h.tenant = p_tenant);
    RETURN;
  END IF;
  IF v_covering THEN
    UPDATE "quotaplane".quota_runs r SET status = 'withheld', status_since_ms = p_at_ms
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status <> 'withheld';
    verdict := 'withheld';
    halts := (SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      FROM "quotaplane".quota_halted h WHERE h.tenant = p_tenant);
  END IF;
END
$function$;

-- The schema of a new quotaplane PostgreSQL store, in schema "quotaplane". Generated from a live database by test/schema/schema-snapshot.ts: refresh it with `npm run snapshot:schema`, never by hand.
-- Applied migrations: 1 quotaplane, 2 halts_reach_running, 3 api_key_expiry_and_use, 4 events, 5 webhooks, 6 model_calls

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

CREATE TABLE quotaplane.quota_book_versions (
  tenant text COLLATE "C" NOT NULL,
  version bigint NOT NULL,
  CONSTRAINT quota_book_versions_pkey PRIMARY KEY (tenant)
);

CREATE TABLE quotaplane.quota_call_ceilings (
  tenant text COLLATE "C" NOT NULL,
  ceilings_json jsonb NOT NULL,
  updated_at_ms bigint NOT NULL,
  CONSTRAINT quota_call_ceilings_pkey PRIMARY KEY (tenant)
);

CREATE TABLE quotaplane.quota_call_meters (
  tenant text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  booked_tokens quotaplane.quota_amount NOT NULL,
  booked_requests quotaplane.quota_amount NOT NULL,
  booked_minor_units quotaplane.quota_amount NOT NULL,
  held_tokens quotaplane.quota_amount NOT NULL,
  held_requests quotaplane.quota_amount NOT NULL,
  held_minor_units quotaplane.quota_amount NOT NULL,
  latest_at_ms bigint,
  base_tokens quotaplane.quota_amount NOT NULL,
  base_requests quotaplane.quota_amount NOT NULL,
  base_minor_units quotaplane.quota_amount NOT NULL,
  pruned_through_ms bigint NOT NULL,
  CONSTRAINT quota_call_meters_pkey PRIMARY KEY (tenant, subject)
);

CREATE TABLE quotaplane.quota_call_reservations (
  tenant text COLLATE "C" NOT NULL,
  call_id text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  agent text COLLATE "C",
  end_user text COLLATE "C",
  subjects_json jsonb NOT NULL,
  reserved_tokens quotaplane.quota_amount NOT NULL,
  reserved_requests quotaplane.quota_amount NOT NULL,
  reserved_minor_units quotaplane.quota_amount NOT NULL,
  max_output_tokens quotaplane.quota_amount NOT NULL,
  at_ms bigint NOT NULL,
  deadline_ms bigint NOT NULL,
  status text COLLATE "C" NOT NULL,
  booked_tokens quotaplane.quota_amount,
  booked_requests quotaplane.quota_amount,
  booked_minor_units quotaplane.quota_amount,
  estimated boolean NOT NULL,
  closed_at_ms bigint,
  CONSTRAINT quota_call_reservations_pkey PRIMARY KEY (tenant, call_id),
  CONSTRAINT quota_call_reservations_status_check CHECK ((status = ANY (ARRAY['open'::text, 'booked'::text, 'released'::text])))
);

CREATE TABLE quotaplane.quota_call_usage (
  tenant text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  at_ms bigint NOT NULL,
  tokens quotaplane.quota_amount NOT NULL,
  requests quotaplane.quota_amount NOT NULL,
  minor_units quotaplane.quota_amount NOT NULL,
  CONSTRAINT quota_call_usage_pkey PRIMARY KEY (tenant, subject, at_ms)
);

CREATE TABLE quotaplane.quota_events (
  seq bigint NOT NULL DEFAULT nextval('quotaplane.quota_events_seq_seq'::regclass),
  id text COLLATE "C" NOT NULL,
  event_key text COLLATE "C" NOT NULL,
  tenant text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  at_ms bigint NOT NULL,
  data_json jsonb NOT NULL,
  retired_by bigint NOT NULL DEFAULT 0,
  CONSTRAINT quota_events_pkey PRIMARY KEY (seq)
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
  reaches_running boolean NOT NULL DEFAULT false,
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
  CONSTRAINT quota_plane_pkey PRIMARY KEY (id)
);

CREATE TABLE quotaplane.quota_plane_halt (
  id integer NOT NULL,
  reason text NOT NULL,
  by_actor text NOT NULL,
  by_basis text NOT NULL,
  at_ms bigint NOT NULL,
  reaches_running boolean NOT NULL,
  CONSTRAINT quota_plane_halt_id_check CHECK ((id = 1)),
  CONSTRAINT quota_plane_halt_pkey PRIMARY KEY (id)
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
  CONSTRAINT quota_tenants_pkey PRIMARY KEY (tenant)
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
  request_json text NOT NULL,
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
  expires_at_ms bigint,
  last_used_at_ms bigint,
  CONSTRAINT quotaplane_api_keys_check CHECK (((role = 'operator'::text) OR (tenant <> '*'::text))),
  CONSTRAINT quotaplane_api_keys_key_hash_key UNIQUE (key_hash),
  CONSTRAINT quotaplane_api_keys_pkey PRIMARY KEY (key_id),
  CONSTRAINT quotaplane_api_keys_role_check CHECK ((role = ANY (ARRAY['runner'::text, 'operator'::text])))
);

CREATE TABLE quotaplane.quotaplane_key_sessions (
  session_hash text COLLATE "C" NOT NULL,
  key_id text COLLATE "C" NOT NULL,
  created_at_ms bigint NOT NULL,
  expires_at_ms bigint NOT NULL,
  CONSTRAINT quotaplane_key_sessions_pkey PRIMARY KEY (session_hash)
);

CREATE TABLE quotaplane.quotaplane_schema (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at_ms bigint NOT NULL,
  CONSTRAINT quotaplane_schema_pkey PRIMARY KEY (version)
);

CREATE TABLE quotaplane.quotaplane_webhook_deliveries (
  delivery_id text COLLATE "C" NOT NULL,
  endpoint_id text COLLATE "C" NOT NULL,
  tenant text COLLATE "C",
  event_seq bigint NOT NULL,
  event_json jsonb NOT NULL,
  status text COLLATE "C" NOT NULL,
  attempts integer NOT NULL,
  due_at_ms bigint NOT NULL,
  claim text COLLATE "C",
  created_at_ms bigint NOT NULL,
  last_attempt_at_ms bigint,
  last_result text,
  delivered_at_ms bigint,
  CONSTRAINT quotaplane_webhook_deliveries_pkey PRIMARY KEY (delivery_id)
);

CREATE TABLE quotaplane.quotaplane_webhook_endpoints (
  endpoint_id text COLLATE "C" NOT NULL,
  tenant text COLLATE "C",
  url text NOT NULL,
  event_types_json jsonb,
  secrets_json jsonb NOT NULL,
  after_seq bigint NOT NULL,
  created_at_ms bigint NOT NULL,
  CONSTRAINT quotaplane_webhook_endpoints_pkey PRIMARY KEY (endpoint_id)
);

CREATE INDEX quota_agent_figures_by_agent ON quotaplane.quota_agent_figures USING btree (agent_name);
CREATE UNIQUE INDEX quota_agent_figures_pkey ON quotaplane.quota_agent_figures USING btree (tenant, agent_name);
CREATE UNIQUE INDEX quota_agent_spent_pkey ON quotaplane.quota_agent_spent USING btree (tenant, agent_name, period);
CREATE INDEX quota_audit_by_action ON quotaplane.quota_audit USING btree (tenant, action, seq);
CREATE UNIQUE INDEX quota_audit_pkey ON quotaplane.quota_audit USING btree (tenant, seq);
CREATE UNIQUE INDEX quota_book_versions_pkey ON quotaplane.quota_book_versions USING btree (tenant);
CREATE UNIQUE INDEX quota_call_ceilings_pkey ON quotaplane.quota_call_ceilings USING btree (tenant);
CREATE UNIQUE INDEX quota_call_meters_pkey ON quotaplane.quota_call_meters USING btree (tenant, subject);
CREATE INDEX quota_call_reservations_closed ON quotaplane.quota_call_reservations USING btree (tenant, closed_at_ms) WHERE (status <> 'open'::text);
CREATE INDEX quota_call_reservations_open ON quotaplane.quota_call_reservations USING btree (tenant, deadline_ms) WHERE (status = 'open'::text);
CREATE UNIQUE INDEX quota_call_reservations_pkey ON quotaplane.quota_call_reservations USING btree (tenant, call_id);
CREATE UNIQUE INDEX quota_call_usage_pkey ON quotaplane.quota_call_usage USING btree (tenant, subject, at_ms);
CREATE UNIQUE INDEX quota_events_by_tenant ON quotaplane.quota_events USING btree (tenant, retired_by, event_key);
CREATE UNIQUE INDEX quota_events_pkey ON quotaplane.quota_events USING btree (seq);
CREATE UNIQUE INDEX quota_figures_pkey ON quotaplane.quota_figures USING btree (tenant);
CREATE UNIQUE INDEX quota_halted_pkey ON quotaplane.quota_halted USING btree (tenant, scope);
CREATE UNIQUE INDEX quota_passes_pkey ON quotaplane.quota_passes USING btree (tenant, run_id, epoch);
CREATE INDEX quota_passes_unsettled ON quotaplane.quota_passes USING btree (tenant, lease_expires_at_ms) WHERE (settled_at_ms IS NULL);
CREATE UNIQUE INDEX quota_plane_pkey ON quotaplane.quota_plane USING btree (id);
CREATE UNIQUE INDEX quota_plane_halt_pkey ON quotaplane.quota_plane_halt USING btree (id);
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
CREATE INDEX quotaplane_key_sessions_by_expiry ON quotaplane.quotaplane_key_sessions USING btree (expires_at_ms);
CREATE UNIQUE INDEX quotaplane_key_sessions_pkey ON quotaplane.quotaplane_key_sessions USING btree (session_hash);
CREATE UNIQUE INDEX quotaplane_schema_pkey ON quotaplane.quotaplane_schema USING btree (version);
CREATE UNIQUE INDEX quotaplane_webhook_deliveries_by_endpoint ON quotaplane.quotaplane_webhook_deliveries USING btree (endpoint_id, event_seq);
CREATE INDEX quotaplane_webhook_deliveries_by_tenant ON quotaplane.quotaplane_webhook_deliveries USING btree (tenant);
CREATE INDEX quotaplane_webhook_deliveries_due ON quotaplane.quotaplane_webhook_deliveries USING btree (status, due_at_ms);
CREATE UNIQUE INDEX quotaplane_webhook_deliveries_pkey ON quotaplane.quotaplane_webhook_deliveries USING btree (delivery_id);
CREATE INDEX quotaplane_webhook_endpoints_by_tenant ON quotaplane.quotaplane_webhook_endpoints USING btree (tenant);
CREATE UNIQUE INDEX quotaplane_webhook_endpoints_pkey ON quotaplane.quotaplane_webhook_endpoints USING btree (endpoint_id);

CREATE SEQUENCE quotaplane.quota_events_seq_seq;
CREATE OR REPLACE FUNCTION quotaplane.quota_admission_lock(p_tenant text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM "quotaplane".quota_tenant_lock(p_tenant);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_books_load(p_want jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
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
  v_versions jsonb := '{}'::jsonb;
BEGIN
  -- A batch that reads the plane ceiling holds its lock (shared) until it commits, so the ceiling
  -- cannot change under a decision made on it (quota_set_plane_lock takes it exclusively).
  IF coalesce((p_want ->> 'plane')::boolean, false) THEN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('"quotaplane".quota-plane-ceiling', 3));
  END IF;
  FOR v_key IN SELECT jsonb_array_elements_text(coalesce(p_want -> 'lock', '[]'::jsonb)) LOOP
    v_versions := v_versions || jsonb_build_object(v_key, "quotaplane".quota_tenant_lock(v_key));
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
                                                                 'by_basis', h.by_basis, 'at_ms', h.at_ms,
                                                                 'reaches_running', h.reaches_running) ORDER BY h.scope), '[]'::jsonb)
                      FROM "quotaplane".quota_halted h WHERE h.tenant = v_tenant),
          'waiting', EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = v_tenant AND w.state = 'waiting'),
          'granted', EXISTS (SELECT 1 FROM "quotaplane".quota_waiters w WHERE w.tenant = v_tenant AND w.state = 'granted')) END,
      'queue', CASE WHEN coalesce((v_t ->> 'queue')::boolean, false) THEN
          (SELECT coalesce(jsonb_agg(to_jsonb(w) - 'tenant' ORDER BY w.seq), '[]'::jsonb) FROM "quotaplane".quota_waiters w
            WHERE w.tenant = v_tenant) END,
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
                     WHERE h.tenant = v_tenant AND h.run_id = ANY (v_runs))) END,
      'agents', CASE WHEN cardinality(v_agents) > 0 THEN
          (SELECT jsonb_agg(jsonb_build_object('agent_name', a.agent_name, 'running', a.running))
             FROM "quotaplane".quota_agent_figures a WHERE a.tenant = v_tenant AND a.agent_name = ANY (v_agents)) END,
      'periods', CASE WHEN cardinality(v_periods) > 0 THEN
          (SELECT jsonb_agg(to_jsonb(s) - 'tenant') FROM "quotaplane".quota_spent s
            WHERE s.tenant = v_tenant AND s.period = ANY (v_periods)) END,
      'agentPeriods', CASE WHEN v_t ? 'agentPeriods' THEN (SELECT jsonb_agg(to_jsonb(s) - 'tenant')
          FROM jsonb_array_elements(v_t -> 'agentPeriods') AS k(pair),
          LATERAL (SELECT * FROM "quotaplane".quota_agent_spent a
                    WHERE a.tenant = v_tenant AND a.agent_name = k.pair ->> 0 AND a.period = k.pair ->> 1) AS s) END,
      'grants', CASE WHEN cardinality(v_grants) > 0 THEN
          (SELECT jsonb_agg(to_jsonb(g) - 'tenant') FROM "quotaplane".quota_rate_grants g
            WHERE g.tenant = v_tenant AND g.grant_ref = ANY (v_grants)) END,
      'rateKeys', CASE WHEN v_t ? 'rateKeys' THEN (SELECT jsonb_agg(k.triple || to_jsonb(q.reserved_at_ms))
          FROM jsonb_array_elements(v_t -> 'rateKeys') AS k(triple),
          LATERAL (SELECT r.reserved_at_ms FROM "quotaplane".quota_rate r
                    WHERE r.tenant = v_tenant AND r.grant_ref = k.triple ->> 0 AND r.run_id = k.triple ->> 1
                      AND r.dispatch = k.triple ->> 2) AS q) END,
      'rateOrdinals', CASE WHEN v_t ? 'rateOrdinals' THEN (SELECT jsonb_agg(jsonb_build_array(k.pair -> 0, k.pair -> 1, q.reserved_at_ms))
          FROM jsonb_array_elements(v_t -> 'rateOrdinals') AS k(pair),
          LATERAL (SELECT r.reserved_at_ms FROM "quotaplane".quota_rate r
                    WHERE r.tenant = v_tenant AND r.grant_ref = k.pair ->> 0 AND r.ordinal = (k.pair ->> 1)::bigint) AS q) END,
      'rateAfter', CASE WHEN v_t ? 'rateAfter' THEN (SELECT jsonb_agg(jsonb_build_array(k.pair -> 0, k.pair -> 1,
            (SELECT q.ordinal FROM "quotaplane".quota_rate q
              WHERE q.tenant = v_tenant AND q.grant_ref = k.pair ->> 0 AND q.reserved_at_ms > (k.pair ->> 1)::bigint
              ORDER BY q.reserved_at_ms, q.ordinal LIMIT 1)))
          FROM jsonb_array_elements(v_t -> 'rateAfter') AS k(pair)) END,
      'audit', CASE WHEN coalesce((v_t ->> 'audit')::boolean, false) THEN jsonb_build_object('head',
          (SELECT jsonb_build_object('seq', a.seq, 'hash', a.hash) FROM "quotaplane".quota_audit a
            WHERE a.tenant = v_tenant ORDER BY a.seq DESC LIMIT 1)) END));
  END LOOP;

  IF coalesce((p_want ->> 'plane')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('plane', jsonb_build_object('ceiling',
      (SELECT p.ceiling_json FROM "quotaplane".quota_plane p WHERE p.id = 1),
      'halt', (SELECT to_jsonb(h) - 'id' FROM "quotaplane".quota_plane_halt h WHERE h.id = 1)));
  END IF;
  IF coalesce((p_want ->> 'planeRunning')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('planeRunning', coalesce((SELECT sum(f.running) FROM "quotaplane".quota_figures f), 0));
  END IF;
  IF jsonb_array_length(coalesce(p_want -> 'planeAgents', '[]'::jsonb)) > 0 THEN
    v_store := v_store || jsonb_build_object('planeAgents', (SELECT jsonb_object_agg(n.agent,
        coalesce((SELECT sum(a.running) FROM "quotaplane".quota_agent_figures a WHERE a.agent_name = n.agent), 0))
      FROM jsonb_array_elements_text(p_want -> 'planeAgents') AS n(agent)));
  END IF;
  IF jsonb_array_length(coalesce(p_want -> 'turns', '[]'::jsonb)) > 0 THEN
    v_store := v_store || jsonb_build_object('turns', (SELECT jsonb_object_agg(t.tenant, t.vtime)
      FROM "quotaplane".quota_wait_turns t WHERE t.tenant IN (SELECT jsonb_array_elements_text(p_want -> 'turns'))));
  END IF;
  IF coalesce((p_want ->> 'waitingTenants')::boolean, false) THEN
    v_store := v_store || jsonb_build_object('waitingTenants', (SELECT coalesce(jsonb_agg(c.tenant ORDER BY c.tenant), '[]'::jsonb)
      FROM (SELECT DISTINCT w.tenant FROM "quotaplane".quota_waiters w WHERE w.state = 'waiting') AS c
     WHERE pg_try_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(c.tenant) || ':' || c.tenant, 0))));
    -- A tenant taken here may be written by this transaction: its version is raised too.
    INSERT INTO "quotaplane".quota_book_versions AS v (tenant, version)
      SELECT w.tenant, "quotaplane".quota_clock_us() FROM jsonb_array_elements_text(v_store -> 'waitingTenants') AS w(tenant)
      ON CONFLICT (tenant) DO UPDATE SET version = greatest(v.version + 1, "quotaplane".quota_clock_us());
  END IF;
  RETURN v_store || jsonb_build_object('tenants', v_tenants, 'versions', v_versions);
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_books_write(p_rows jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
    IF NOT pg_try_advisory_xact_lock_shared(hashtextextended('"quotaplane".quota-plane-ceiling', 3)) THEN
      RETURN '{"stale": true}'::jsonb;
    END IF;
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'expect') AS x(tenant text, version bigint) LOOP
      IF NOT pg_try_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(k.tenant) || ':' || k.tenant, 0))
         OR NOT EXISTS (SELECT 1 FROM "quotaplane".quota_book_versions v WHERE v.tenant = k.tenant AND v.version = k.version) THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
    END LOOP;
    IF coalesce((SELECT p.ceiling_json FROM "quotaplane".quota_plane p WHERE p.id = 1), 'null'::jsonb)
       IS DISTINCT FROM coalesce(p_rows -> 'expectPlane', 'null'::jsonb) THEN
      RETURN '{"stale": true}'::jsonb;
    END IF;
    -- The plane-wide halt is checked as the ceiling is (`expectPlaneHalt`, as stored: null for
    -- none): it is thrown and lifted under the ceiling's lock, taken exclusively.
    IF coalesce((SELECT to_jsonb(h) - 'id' FROM "quotaplane".quota_plane_halt h WHERE h.id = 1), 'null'::jsonb)
       IS DISTINCT FROM coalesce(p_rows -> 'expectPlaneHalt', 'null'::jsonb) THEN
      RETURN '{"stale": true}'::jsonb;
    END IF;
    FOR k IN SELECT * FROM jsonb_to_recordset(coalesce(p_rows -> 'absent', '[]'::jsonb)) AS x(tenant text, run_id text) LOOP
      IF EXISTS (SELECT 1 FROM "quotaplane".quota_runs t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM "quotaplane".quota_pruned t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM "quotaplane".quota_waiters t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM "quotaplane".quota_running t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM "quotaplane".quota_reserved t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM "quotaplane".quota_passes t WHERE t.tenant = k.tenant AND t.run_id = k.run_id)
         OR EXISTS (SELECT 1 FROM "quotaplane".quota_settled t WHERE t.tenant = k.tenant AND t.run_id = k.run_id) THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
    END LOOP;
    FOR k IN SELECT * FROM jsonb_to_recordset(coalesce(p_rows -> 'absentRates', '[]'::jsonb))
                      AS x(tenant text, grant_ref text, run_id text, dispatch text) LOOP
      IF EXISTS (SELECT 1 FROM "quotaplane".quota_rate t WHERE t.tenant = k.tenant AND t.grant_ref = k.grant_ref
                    AND t.run_id = k.run_id AND t.dispatch = k.dispatch) THEN
        RETURN '{"stale": true}'::jsonb;
      END IF;
    END LOOP;
    -- Checked only (a batch that changed nothing: its refusals stand as of the versions read).
    IF coalesce((p_rows ->> 'readOnly')::boolean, false) THEN
      RETURN NULL;
    END IF;
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'expect') AS x(tenant text, version bigint) LOOP
      UPDATE "quotaplane".quota_book_versions v SET version = v.version + 1 WHERE v.tenant = k.tenant;
    END LOOP;
  END IF;
  IF p_rows ? 'slotsGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'slotsGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM "quotaplane".quota_running t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'slots' THEN
    INSERT INTO "quotaplane".quota_running AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_running, coalesce(p_rows -> 'slots', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET admitted_at_ms = excluded.admitted_at_ms, agent_name = excluded.agent_name;
  END IF;
  IF p_rows ? 'holdsGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'holdsGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM "quotaplane".quota_reserved t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'holds' THEN
    INSERT INTO "quotaplane".quota_reserved AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_reserved, coalesce(p_rows -> 'holds', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET period = excluded.period, day = excluded.day, agent_name = excluded.agent_name,
        tokens = excluded.tokens, minor_units = excluded.minor_units;
  END IF;
  IF p_rows ? 'figures' THEN
    INSERT INTO "quotaplane".quota_figures AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_figures, coalesce(p_rows -> 'figures', '[]'::jsonb))
      ON CONFLICT (tenant) DO UPDATE SET running = excluded.running;
  END IF;
  IF p_rows ? 'agentFigures' THEN
    INSERT INTO "quotaplane".quota_agent_figures AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_agent_figures, coalesce(p_rows -> 'agentFigures', '[]'::jsonb))
      ON CONFLICT (tenant, agent_name) DO UPDATE SET running = excluded.running;
  END IF;
  IF p_rows ? 'spent' THEN
    INSERT INTO "quotaplane".quota_spent AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_spent, coalesce(p_rows -> 'spent', '[]'::jsonb))
      ON CONFLICT (tenant, period) DO UPDATE SET tokens = excluded.tokens, minor_units = excluded.minor_units,
        held_tokens = excluded.held_tokens, held_minor_units = excluded.held_minor_units;
  END IF;
  IF p_rows ? 'agentSpent' THEN
    INSERT INTO "quotaplane".quota_agent_spent AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_agent_spent, coalesce(p_rows -> 'agentSpent', '[]'::jsonb))
      ON CONFLICT (tenant, agent_name, period) DO UPDATE SET tokens = excluded.tokens, minor_units = excluded.minor_units,
        held_tokens = excluded.held_tokens, held_minor_units = excluded.held_minor_units;
  END IF;
  IF p_rows ? 'passesGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'passesGone') AS x(tenant text, run_id text, epoch bigint) LOOP
      DELETE FROM "quotaplane".quota_passes t WHERE t.tenant = k.tenant AND t.run_id = k.run_id AND t.epoch = k.epoch;
    END LOOP;
  END IF;
  IF p_rows ? 'runsGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'runsGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM "quotaplane".quota_runs t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'runs' THEN
    INSERT INTO "quotaplane".quota_runs AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_runs, coalesce(p_rows -> 'runs', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET status = excluded.status, agent_name = excluded.agent_name,
        agent_digest = excluded.agent_digest, chain_json = excluded.chain_json, budget_json = excluded.budget_json,
        width = excluded.width, admitted_at_ms = excluded.admitted_at_ms, last_epoch = excluded.last_epoch,
        status_since_ms = excluded.status_since_ms;
  END IF;
  IF p_rows ? 'passes' THEN
    INSERT INTO "quotaplane".quota_passes AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_passes, coalesce(p_rows -> 'passes', '[]'::jsonb))
      ON CONFLICT (tenant, run_id, epoch) DO UPDATE SET period = excluded.period, takes_slot = excluded.takes_slot,
        started_at_ms = excluded.started_at_ms, lease_expires_at_ms = excluded.lease_expires_at_ms,
        settled_at_ms = excluded.settled_at_ms, hold_tokens = excluded.hold_tokens, hold_minor_units = excluded.hold_minor_units,
        receipt_tokens = excluded.receipt_tokens, receipt_minor_units = excluded.receipt_minor_units,
        receipt_concludes = excluded.receipt_concludes;
  END IF;
  IF p_rows ? 'receipts' THEN
    INSERT INTO "quotaplane".quota_settled
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_settled, coalesce(p_rows -> 'receipts', '[]'::jsonb));
  END IF;
  IF p_rows ? 'ratePrunes' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'ratePrunes') AS x(tenant text, grant_ref text, floor_ms bigint) LOOP
      DELETE FROM "quotaplane".quota_rate t WHERE t.tenant = k.tenant AND t.grant_ref = k.grant_ref AND t.reserved_at_ms <= k.floor_ms;
    END LOOP;
  END IF;
  IF p_rows ? 'rates' THEN
    INSERT INTO "quotaplane".quota_rate
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_rate, coalesce(p_rows -> 'rates', '[]'::jsonb));
  END IF;
  IF p_rows ? 'rateGrants' THEN
    INSERT INTO "quotaplane".quota_rate_grants AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_rate_grants, coalesce(p_rows -> 'rateGrants', '[]'::jsonb))
      ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms;
  END IF;
  IF p_rows ? 'waitersGone' THEN
    FOR k IN SELECT * FROM jsonb_to_recordset(p_rows -> 'waitersGone') AS x(tenant text, run_id text) LOOP
      DELETE FROM "quotaplane".quota_waiters t WHERE t.tenant = k.tenant AND t.run_id = k.run_id;
    END LOOP;
  END IF;
  IF p_rows ? 'waiters' THEN
    INSERT INTO "quotaplane".quota_waiters AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_waiters, coalesce(p_rows -> 'waiters', '[]'::jsonb))
      ON CONFLICT (tenant, run_id) DO UPDATE SET seq = excluded.seq, state = excluded.state, request_json = excluded.request_json,
        enqueued_at_ms = excluded.enqueued_at_ms, wait_until_ms = excluded.wait_until_ms,
        lease_expires_at_ms = excluded.lease_expires_at_ms, decided_at_ms = excluded.decided_at_ms;
  END IF;
  IF p_rows ? 'turns' THEN
    INSERT INTO "quotaplane".quota_wait_turns AS t
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_wait_turns, coalesce(p_rows -> 'turns', '[]'::jsonb))
      ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
  END IF;
  IF p_rows ? 'notify' THEN
    PERFORM pg_notify('quotaplane_waiters', '"quotaplane":' || n.tenant)
       FROM jsonb_array_elements_text(coalesce(p_rows -> 'notify', '[]'::jsonb)) AS n(tenant);
  END IF;
  IF p_rows ? 'audit' THEN
    INSERT INTO "quotaplane".quota_audit
      SELECT * FROM jsonb_populate_recordset(NULL::"quotaplane".quota_audit, coalesce(p_rows -> 'audit', '[]'::jsonb));
  END IF;
  -- Events last: the events lock is the last lock a transaction takes, so it waits on no one.
  IF p_rows ? 'events' THEN
    PERFORM "quotaplane".quota_events_append(p_rows -> 'events');
  END IF;
  RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_books_write_caught(p_rows jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_detail text;
  v_hint text;
BEGIN
  RETURN "quotaplane".quota_books_write(p_rows);
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

CREATE OR REPLACE FUNCTION quotaplane.quota_clock_us()
 RETURNS bigint
 LANGUAGE sql
AS $function$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint $function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_events_append(p_events jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-events', 0));
  INSERT INTO "quotaplane".quota_events (id, event_key, tenant, type, at_ms, data_json)
    SELECT e.id, e.event_key, e.tenant, e.type, e.at_ms, e.data_json
      FROM jsonb_to_recordset(p_events) AS e(id text, event_key text, tenant text, type text, at_ms bigint, data_json jsonb)
    ON CONFLICT (tenant, retired_by, event_key) DO NOTHING;
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_set_plane_lock()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-plane-ceiling', 3));
END
$function$;

CREATE OR REPLACE FUNCTION quotaplane.quota_tenant_lock(p_tenant text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_version bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('"quotaplane".quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
  INSERT INTO "quotaplane".quota_book_versions AS v (tenant, version) VALUES (p_tenant, "quotaplane".quota_clock_us())
    ON CONFLICT (tenant) DO UPDATE SET version = greatest(v.version + 1, "quotaplane".quota_clock_us())
    RETURNING v.version INTO v_version;
  RETURN v_version;
END
$function$;

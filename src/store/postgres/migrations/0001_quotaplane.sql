-- Version 1 of the PostgreSQL schema, the first release's (0.1.0): the slots, holds, settled
-- totals, receipts, halts and rate windows, the run registry, passes, tenant quotas, waiting
-- admissions, retention tombstones, the audit log and the API keys; then the tenant lock and two
-- functions that move rows, quota_books_load and quota_books_write. No rule lives here: every
-- decision is made by core/ in TypeScript (store/postgres/postgres-tenant-books.ts) on the rows
-- these functions load, and a stored quota or plane ceiling is judged where it is read, like any
-- input. `:QUOTAPLANE_SCHEMA` stands for the quoted schema name.
--
-- Beside the authoritative sets, small tables keep figures as counters updated in place, so a
-- decision never counts a set or sums a period: quota_figures.running (the size of the tenant's
-- slot set) and the held_* columns of quota_spent (the sum of the tenant's holds in that period),
-- with their per-agent counterparts. A decision that moves a slot or a hold moves its counter in
-- the same write. Counter tables have a fillfactor of 50 and no index on a counted column, so their
-- updates stay HOT (no index entries, little WAL). Every table leads with tenant, so every read is
-- a range over one tenant's prefix. Instants are Unix ms in BIGINT; amounts are BIGINT checked to
-- 0 … 2^53 − 1 (the domain quota_amount). Text keys use the "C" collation, which compares UTF-8
-- bytes: listings come out bytewise (docs/design/rules.md#c23) whatever the database's default
-- collation is. A released migration is never edited: a change is a new numbered file.

-- Checked value kinds as domains, not table CHECK constraints. PostgreSQL evaluates a domain's
-- check only on the columns a statement assigns, with the expression its type cache planned once
-- per connection; a table CHECK is read back from the catalog, planned and evaluated on every
-- INSERT and UPDATE of the table, whatever columns change. Same rules, same SQLSTATE (23514) on a
-- violation.
CREATE DOMAIN :QUOTAPLANE_SCHEMA.quota_amount AS BIGINT CHECK (VALUE BETWEEN 0 AND 9007199254740991);
CREATE DOMAIN :QUOTAPLANE_SCHEMA.quota_sum AS NUMERIC CHECK (VALUE >= 0);
CREATE DOMAIN :QUOTAPLANE_SCHEMA.quota_count AS BIGINT CHECK (VALUE >= 0);
CREATE DOMAIN :QUOTAPLANE_SCHEMA.quota_ordinal AS BIGINT CHECK (VALUE >= 1);
CREATE DOMAIN :QUOTAPLANE_SCHEMA.quota_run_status AS TEXT
  CHECK (VALUE IN ('running', 'paused', 'withheld', 'stranded', 'concluded', 'released'));

-- The running set: membership, never a counter; the first admitted_at_ms is kept on retry.
-- agent_name is the agent of the run that took the slot (NULL without one).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_running (
  tenant          TEXT COLLATE "C" NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  admitted_at_ms  BIGINT NOT NULL,
  agent_name      TEXT COLLATE "C",
  PRIMARY KEY (tenant, run_id)
);

-- The size of each tenant's running set, moved with every slot taken or given back. The
-- plane-wide running count is its sum over tenants, read only under the plane lock.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_figures (
  tenant   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  running  :QUOTAPLANE_SCHEMA.quota_count NOT NULL
) WITH (fillfactor = 50);

-- The slots of each agent's runs per tenant, moved with the slot like quota_figures;
-- summed over tenants (by agent_name) for a plane-wide per-agent ceiling.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_agent_figures (
  tenant      TEXT COLLATE "C" NOT NULL,
  agent_name  TEXT COLLATE "C" NOT NULL,
  running     :QUOTAPLANE_SCHEMA.quota_count NOT NULL,
  PRIMARY KEY (tenant, agent_name)
) WITH (fillfactor = 50);
CREATE INDEX quota_agent_figures_by_agent ON :QUOTAPLANE_SCHEMA.quota_agent_figures (agent_name);

-- Settled totals and hold sums per period of one agent's runs in a tenant: the same
-- columns and rules as quota_spent, moved in the same writes.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_agent_spent (
  tenant            TEXT COLLATE "C" NOT NULL,
  agent_name        TEXT COLLATE "C" NOT NULL,
  period            TEXT COLLATE "C" NOT NULL,
  tokens :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  minor_units :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  held_tokens       :QUOTAPLANE_SCHEMA.quota_sum NOT NULL DEFAULT 0,
  held_minor_units  :QUOTAPLANE_SCHEMA.quota_sum NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, agent_name, period)
) WITH (fillfactor = 50);

-- The plane-wide ceiling: at most one row, validated with parsePlaneCeiling on every read.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_plane (
  id            INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  ceiling_json  JSONB NOT NULL
);

-- Settled totals per billing period (tokens, minor_units: only settle adds, nothing ever
-- subtracts; a month's row includes what its days settled), and the sum of
-- the holds counted in that period (a month's includes its days') (held_*: exact, in numeric, read
-- clamped to 2^53 − 1), moved with every hold written, shrunk, carried or dropped.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_spent (
  tenant            TEXT COLLATE "C" NOT NULL,
  period            TEXT COLLATE "C" NOT NULL,
  tokens :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  minor_units :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  held_tokens       :QUOTAPLANE_SCHEMA.quota_sum NOT NULL DEFAULT 0,
  held_minor_units  :QUOTAPLANE_SCHEMA.quota_sum NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, period)
) WITH (fillfactor = 50);

-- One hold per run, in the period it is held against; day is the UTC day it was held or
-- carried on (its period when that is a day; NULL when unknown). A hold counts in its month and
-- in that day, whatever kind was in force.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_reserved (
  tenant  TEXT COLLATE "C" NOT NULL,
  run_id  TEXT COLLATE "C" NOT NULL,
  period  TEXT COLLATE "C" NOT NULL,
  day     TEXT COLLATE "C",
  -- the agent of the run holding it (NULL without one): its spend counts in quota_agent_spent
  agent_name  TEXT COLLATE "C",
  tokens :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  minor_units :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  PRIMARY KEY (tenant, run_id)
);

-- Receipts written by the port's settle: the whole payload, so a retry can be compared field by
-- field. A pass's own settle keeps its receipt in its quota_passes row instead (receipt_*), which
-- that settle updates anyway: a row and an index entry fewer per cycle. A (run, epoch)
-- has at most one receipt, here or there; each settle looks in both.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_settled (
  tenant        TEXT COLLATE "C" NOT NULL,
  run_id        TEXT COLLATE "C" NOT NULL,
  epoch         :QUOTAPLANE_SCHEMA.quota_ordinal NOT NULL,
  period        TEXT COLLATE "C",
  tokens :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  minor_units :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  release_slot  BOOLEAN NOT NULL,
  concludes     BOOLEAN NOT NULL,
  PRIMARY KEY (tenant, run_id, epoch)
);

-- Standing halts: one independent row per scope key.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_halted (
  tenant    TEXT COLLATE "C" NOT NULL,
  scope     TEXT COLLATE "C" NOT NULL,
  reason    TEXT NOT NULL,
  by_actor  TEXT NOT NULL,
  by_basis  TEXT NOT NULL,
  at_ms     BIGINT NOT NULL,
  PRIMARY KEY (tenant, scope)
);

-- One row per dispatch of a rate-ceilinged grant, numbered per (tenant, grant) from 1.
-- reserved_at_ms is the recorded instant: never earlier than the grant's latest recorded one, so
-- instants grow with the ordinal, and the C-th most recent dispatch is one point lookup by ordinal.
-- The (run, dispatch) key is the idempotency.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_rate (
  tenant          TEXT COLLATE "C" NOT NULL,
  grant_ref       TEXT COLLATE "C" NOT NULL,
  ordinal         :QUOTAPLANE_SCHEMA.quota_ordinal NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  dispatch        TEXT COLLATE "C" NOT NULL,
  reserved_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, grant_ref, ordinal)
);
CREATE UNIQUE INDEX quota_rate_by_key ON :QUOTAPLANE_SCHEMA.quota_rate (tenant, grant_ref, run_id, dispatch);
-- Pruning, and the first dispatch a window counts, read one (tenant, grant) by instant.
CREATE INDEX quota_rate_by_instant ON :QUOTAPLANE_SCHEMA.quota_rate (tenant, grant_ref, reserved_at_ms);

-- Per (tenant, grant): the latest ordinal and recorded instant, updated in place. Pruning never
-- deletes it, so ordinals keep growing after the rows they numbered are gone.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_rate_grants (
  tenant        TEXT COLLATE "C" NOT NULL,
  grant_ref     TEXT COLLATE "C" NOT NULL,
  last_ordinal  :QUOTAPLANE_SCHEMA.quota_ordinal NOT NULL,
  last_at_ms    BIGINT NOT NULL,
  PRIMARY KEY (tenant, grant_ref)
) WITH (fillfactor = 50);

-- A tenant's configured quota, validated with parseQuota on every read.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_tenants (
  tenant      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  quota_json  JSONB NOT NULL
);

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

-- The round robin of waiting tenants while the plane-wide ceiling binds: start-time fair
-- queueing. vtime is a tenant's virtual time (it grows by 1 000 000 / weight per grant it gets);
-- the row of tenant '*' keeps the plane's virtual time (the start of the latest grant).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_wait_turns (
  tenant  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  vtime   BIGINT NOT NULL CHECK (vtime >= 0)
);

-- A chain is a JSON array of strings: the database refuses any other value, so no row holds a
-- chain decodeRun would call corrupt.
-- PL/pgSQL, not SQL: PostgreSQL tries to inline a SQL function wherever it plans an expression
-- calling it, which parses its body again each time.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_chain_ok(p_chain jsonb) RETURNS boolean
IMMUTABLE LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN CASE
    WHEN jsonb_typeof(p_chain) <> 'array' THEN false
    ELSE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_chain) AS e(principal) WHERE jsonb_typeof(e.principal) <> 'string')
  END;
END
$fn$;
CREATE DOMAIN :QUOTAPLANE_SCHEMA.quota_chain AS JSONB CHECK (VALUE IS NULL OR :QUOTAPLANE_SCHEMA.quota_chain_ok(VALUE));

-- The run registry: status follows the latest pass, and
-- status_since_ms is when the run entered it (Unix ms).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_runs (
  tenant           TEXT COLLATE "C" NOT NULL,
  run_id           TEXT COLLATE "C" NOT NULL,
  status           :QUOTAPLANE_SCHEMA.quota_run_status NOT NULL,
  agent_name       TEXT,
  agent_digest     TEXT,
  chain_json       :QUOTAPLANE_SCHEMA.quota_chain,
  budget_json      TEXT NOT NULL,
  width            :QUOTAPLANE_SCHEMA.quota_count NOT NULL,
  admitted_at_ms   BIGINT NOT NULL,
  last_epoch       :QUOTAPLANE_SCHEMA.quota_ordinal NOT NULL,
  status_since_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, run_id)
);
-- The sweep reads one tenant's running runs. Partial: a run leaves it when it stops running, so it
-- stays as small as the set of running runs, and the settle that ends a run adds no entry to it
-- (an index over every status would take an entry per status change of every run ever admitted).
-- Listings and the prune walk a tenant's runs by primary key instead (nearly every run is closed).
CREATE INDEX quota_runs_running ON :QUOTAPLANE_SCHEMA.quota_runs (tenant, run_id) WHERE status = 'running';

-- Retention: a prune removes a closed run with its passes and receipts and leaves
-- this row, so a decision about that run id arriving later (a settle retried after a lost answer,
-- an admission under the same id) is refused instead of applied as new. closed_at_ms is when the
-- run concluded or was released, pruned_at_ms when the prune removed it (Unix ms).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_pruned (
  tenant        TEXT COLLATE "C" NOT NULL,
  run_id        TEXT COLLATE "C" NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('concluded', 'released')),
  last_epoch    BIGINT NOT NULL CHECK (last_epoch >= 1),
  closed_at_ms  BIGINT NOT NULL,
  pruned_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, run_id)
);

-- One row per pass (run, epoch). hold_* keep the hold the grant reported, so a retried admission
-- returns its first grant unchanged. receipt_* are the receipt of the pass's own settle
-- (settlePass), written with settled_at_ms: its spend and whether it concluded the run; its
-- period is the pass's, and it released the slot exactly when the pass took one. NULL until then.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_passes (
  tenant               TEXT COLLATE "C" NOT NULL,
  run_id               TEXT COLLATE "C" NOT NULL,
  epoch                :QUOTAPLANE_SCHEMA.quota_ordinal NOT NULL,
  period               TEXT COLLATE "C" NOT NULL,
  takes_slot           BOOLEAN NOT NULL,
  started_at_ms        BIGINT NOT NULL,
  lease_expires_at_ms  BIGINT NOT NULL,
  settled_at_ms        BIGINT,
  hold_tokens          BIGINT,
  hold_minor_units     BIGINT,
  receipt_tokens       :QUOTAPLANE_SCHEMA.quota_amount,
  receipt_minor_units  :QUOTAPLANE_SCHEMA.quota_amount,
  receipt_concludes    BOOLEAN,
  PRIMARY KEY (tenant, run_id, epoch)
);
-- Passes whose receipt is unwritten, by lease expiry: the sweep and unsettledPasses read only
-- those.
CREATE INDEX quota_passes_unsettled ON :QUOTAPLANE_SCHEMA.quota_passes (tenant, lease_expires_at_ms) WHERE settled_at_ms IS NULL;

-- The append-only audit log, numbered and hash-chained per tenant.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_audit (
  tenant       TEXT COLLATE "C" NOT NULL,
  seq          BIGINT NOT NULL CHECK (seq >= 1),
  at_ms        BIGINT NOT NULL,
  actor        TEXT NOT NULL,
  basis        TEXT NOT NULL,
  action       TEXT COLLATE "C" NOT NULL,
  subject      TEXT NOT NULL,
  -- TEXT, not JSONB: the row is evidence, kept byte for byte as hashed (JSONB would reorder it).
  detail_json  TEXT NOT NULL,
  prev_hash    TEXT NOT NULL,
  hash         TEXT NOT NULL,
  PRIMARY KEY (tenant, seq)
);
-- auditLog({ action }) reads one tenant's rows of one action, newest first.
CREATE INDEX quota_audit_by_action ON :QUOTAPLANE_SCHEMA.quota_audit (tenant, action, seq);

-- The API keys of the HTTP service. A key is not a tenant row (an operator key may cover every
-- tenant, '*'), so this table does not lead with tenant. Only the SHA-256 of a key's secret is
-- stored, never the secret; revoked_at_ms stays NULL while the key is usable, a revoked key is
-- kept.
CREATE TABLE :QUOTAPLANE_SCHEMA.quotaplane_api_keys (
  key_id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  key_hash       TEXT COLLATE "C" NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  role           TEXT NOT NULL CHECK (role IN ('runner', 'operator')),
  tenant         TEXT COLLATE "C" NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  revoked_at_ms  BIGINT,
  -- a runner key acts for exactly one tenant; only an operator key may cover every tenant
  CHECK (role = 'operator' OR tenant <> '*')
);

-- ── Locks and the books' version ───────────────────────────────────────────────────────────
-- Decisions of one tenant serialise on a transaction-scoped advisory lock keyed by
-- 'quota-admission:<byte length>:<tenant>' with seed 0 (the length prefix keeps acme apart from a
-- tenant whose name merely begins with it); other tenants never wait. Under READ COMMITTED each
-- statement after the lock reads a snapshot taken after it, so it sees everything the previous
-- holder committed. When a plane-wide ceiling covers a decision, the plane lock (seed 3) is taken
-- after the tenants' locks, so the plane-wide counts are exact across every tenant and instance.
-- Seeds and key prefixes keep the admission, plane, audit and migration locks apart. Every
-- lock key begins with the quoted schema name: advisory locks are per database, and two quotaplane
-- schemas in one database (two deployments, or tests side by side) never wait on each other.

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

-- The server's clock in microseconds: a tenant lock raises the version to at least it, so a
-- version never comes back, not even after a restore brought an older one back (a kept write
-- adds 1, far fewer times than microseconds pass between two tenant locks).
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_clock_us() RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint $fn$;

-- Takes `p_tenant`'s admission lock (seed 0) and raises its books' version; answers the
-- version this transaction holds.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_tenant_lock(p_tenant text) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_version bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_book_versions AS v (tenant, version) VALUES (p_tenant, :QUOTAPLANE_SCHEMA.quota_clock_us())
    ON CONFLICT (tenant) DO UPDATE SET version = greatest(v.version + 1, :QUOTAPLANE_SCHEMA.quota_clock_us())
    RETURNING v.version INTO v_version;
  RETURN v_version;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_admission_lock(p_tenant text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM :QUOTAPLANE_SCHEMA.quota_tenant_lock(p_tenant);
END
$fn$;

-- The plane ceiling's lock (its own key, seed 3): a decision that reads the ceiling holds it
-- shared until it commits; whoever sets the ceiling takes it exclusively first, so the change waits
-- for every decision made on the ceiling before, and every decision after reads the new one.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_set_plane_lock() RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-plane-ceiling', 3));
END
$fn$;

--
-- quota_books_load(p_want) first takes, in this order, the plane ceiling's lock (shared) when it is
-- asked for the ceiling (`plane`), the admission locks of `lock` (tenants, in
-- the order given: the caller sorts them bytewise so two batches never wait on each other in a
-- cycle; each through quota_tenant_lock, raising its version), the plane lock when `planeLock`, and
-- the audit locks of `auditLock`. Then, per entry of `tenants`, the rows named:
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
      SELECT w.tenant, :QUOTAPLANE_SCHEMA.quota_clock_us() FROM jsonb_array_elements_text(v_store -> 'waitingTenants') AS w(tenant)
      ON CONFLICT (tenant) DO UPDATE SET version = greatest(v.version + 1, :QUOTAPLANE_SCHEMA.quota_clock_us());
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

-- Version 1 of the PostgreSQL schema, the first release's: the slots, holds, settled totals,
-- receipts, halts and rate windows of the store primitives, plus the run registry, passes, tenant
-- quotas, waiting admissions, retention tombstones, the audit log and the API keys, then the
-- server-side decision functions. `:QUOTAPLANE_SCHEMA` stands for the quoted schema name.
--
-- Beside the authoritative sets, small tables keep figures as counters updated in place, so a
-- decision never counts a set or sums a period: quota_figures.running (the size of the tenant's
-- slot set) and the held_* columns of quota_spent (the sum of the tenant's holds in that period),
-- with their per-agent counterparts. Only the counter functions (quota_slot_*, quota_hold_*) and
-- quota_settle change a slot or a hold, and each moves its counter in the same transaction. Counter
-- tables have a fillfactor of 50 and no index on a counted column, so their updates stay HOT (no
-- index entries, little WAL). Every table leads with tenant, so every read is a range over one
-- tenant's prefix. Instants are Unix ms in BIGINT; amounts are BIGINT checked to 0 … 2^53 − 1 (the
-- domain quota_amount). Text keys use the "C" collation, which compares UTF-8 bytes: listings come
-- out bytewise (docs/design/rules.md#c23) whatever the database's default collation is.
--
-- The decision functions, one per hot operation, make an admission, a settlement or a dispatch one
-- round trip and one transaction. Each mirrors the SQLite adapter and the pure decisions of core/;
-- the conformance suite proves the two backends answer alike. Later functions call earlier ones.
-- A released migration is never edited: a changed function is CREATE OR REPLACE in a new file.

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
-- columns and rules as quota_spent, moved by the same functions in the same transactions.
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
-- JSONB so the admission function can read the ceilings without a second round trip.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_tenants (
  tenant      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  quota_json  JSONB NOT NULL
);

-- Waiting admissions: one row per admission waiting for a slot of its tenant, served
-- first come, first served by seq (per tenant, assigned under the tenant's admission lock). The
-- admission is kept as quota_admit takes it (without its instant), so the transaction that frees
-- a slot can admit it; lease_expires_at_ms is renewed while its caller waits. state: 'waiting';
-- 'granted' (run and pass 1 written, for the caller to collect); 'refused' (something other than
-- concurrency now refuses it; its caller hears what on collect).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_waiters (
  tenant                   TEXT COLLATE "C" NOT NULL,
  run_id                   TEXT COLLATE "C" NOT NULL,
  seq                      BIGINT NOT NULL CHECK (seq >= 1),
  state                    TEXT NOT NULL CHECK (state IN ('waiting', 'granted', 'refused')),
  agent_name               TEXT,
  agent_digest             TEXT,
  chain_json               TEXT,
  budget_json              TEXT NOT NULL,
  max_tokens               BIGINT,
  max_call_tokens          BIGINT,
  max_minor_units          BIGINT,
  max_call_minor_units     BIGINT,
  width                    BIGINT NOT NULL,
  lease_ms                 BIGINT NOT NULL,
  cover_keys               TEXT[] NOT NULL,
  quota_given              BOOLEAN NOT NULL,
  given_max_runs           BIGINT,
  given_limit_tokens       BIGINT,
  given_limit_minor_units  BIGINT,
  given_period             TEXT,
  given_agent_max_runs     BIGINT,
  given_agent_limit_tokens BIGINT,
  given_agent_limit_minor_units BIGINT,
  enqueued_at_ms           BIGINT NOT NULL,
  wait_until_ms            BIGINT NOT NULL,
  lease_expires_at_ms      BIGINT NOT NULL,
  decided_at_ms            BIGINT,
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

-- A chain is a JSON array of strings: the lifecycle functions read it inside the database (a
-- Withheld answer needs it), so the database refuses what decodeRun would call corrupt.
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

-- The run registry the lifecycle composites keep: status follows the latest pass, and
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
-- (quota_settle_pass), written with settled_at_ms: its spend and whether it concluded the run; its
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


-- ── Row checks ──────────────────────────────────────────────────────────────────────────────
-- Shared by the decision functions and a CHECK constraint. quota_json_ok mirrors what parseQuota
-- accepts (known keys only; ceilings absent, null or a non-negative integer ≤ 2^53 − 1; period
-- monthly/daily; rateCeilings an object of arrays of {count, windowSeconds} amounts; agents an
-- object of agent name → ceilings). It guards quota_tenants.quota_json, so the admission and
-- dispatch functions can read ceilings out of it without a round trip back to TypeScript and can
-- never act on a quota parseQuota would call corrupt (grant keys are left to parseQuota when the
-- quota is read: a bad key cannot change a decision about another grant). quota_halt_row_ok
-- mirrors decodeHaltRow: a scope parseHaltScope accepts, a known operator basis and a safe-integer
-- instant. Admission treats an unreadable halt like a covering one, hands every halt row to
-- TypeScript, and decodeHaltRow throws STORE_CORRUPT. CASE, not AND/OR, guards each JSON
-- function: SQL does not promise to evaluate operands in order.

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_json_amount_ok(p_value jsonb, p_required boolean) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN NOT p_required
    WHEN jsonb_typeof(p_value) = 'number' THEN
      (p_value #>> '{}')::numeric BETWEEN 0 AND 9007199254740991 AND (p_value #>> '{}')::numeric % 1 = 0
    ELSE false
  END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_json_ceilings_ok(p_ceilings jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_ceilings) <> 'array' THEN false
    ELSE NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(p_ceilings) AS c(ceiling)
       WHERE CASE
               WHEN jsonb_typeof(c.ceiling) <> 'object' THEN true
               ELSE NOT (:QUOTAPLANE_SCHEMA.quota_json_amount_ok(c.ceiling -> 'count', true)
                         AND :QUOTAPLANE_SCHEMA.quota_json_amount_ok(c.ceiling -> 'windowSeconds', true))
             END)
  END
$fn$;

-- A map of agent name → object of ceilings named in p_fields; absent or null is fine.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_json_agents_ok(p_agents jsonb, p_fields text[]) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN p_agents IS NULL OR jsonb_typeof(p_agents) = 'null' THEN true
    WHEN jsonb_typeof(p_agents) <> 'object' THEN false
    ELSE NOT EXISTS (
      SELECT 1 FROM jsonb_each(p_agents) AS a(agent, ceilings)
       WHERE CASE
               WHEN jsonb_typeof(a.ceilings) <> 'object' THEN true
               ELSE EXISTS (SELECT 1 FROM jsonb_each(a.ceilings) AS c(name, ceiling)
                             WHERE NOT (c.name = ANY (p_fields)) OR NOT :QUOTAPLANE_SCHEMA.quota_json_amount_ok(c.ceiling, false))
             END)
  END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_json_ok(p_quota jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_quota) <> 'object' THEN false
    ELSE NOT EXISTS (
           SELECT 1 FROM jsonb_object_keys(p_quota) AS k(name)
            WHERE k.name NOT IN ('maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod', 'period', 'rateCeilings',
                                 'agents'))
     AND :QUOTAPLANE_SCHEMA.quota_json_amount_ok(p_quota -> 'maxConcurrentRuns', false)
     AND :QUOTAPLANE_SCHEMA.quota_json_amount_ok(p_quota -> 'maxTokensPerPeriod', false)
     AND :QUOTAPLANE_SCHEMA.quota_json_amount_ok(p_quota -> 'maxMinorUnitsPerPeriod', false)
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
              WHERE NOT :QUOTAPLANE_SCHEMA.quota_json_ceilings_ok(g.ceilings))
         END
     AND :QUOTAPLANE_SCHEMA.quota_json_agents_ok(p_quota -> 'agents',
           ARRAY['maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod'])
  END
$fn$;

-- The plane-wide ceiling's JSON as parsePlaneCeiling accepts it: known keys only, a
-- ceiling amount, agents of { maxConcurrentRuns }, weights of amounts ≥ 1.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_plane_json_ok(p_plane jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_plane) <> 'object' THEN false
    ELSE NOT EXISTS (
           SELECT 1 FROM jsonb_object_keys(p_plane) AS k(name)
            WHERE k.name NOT IN ('maxConcurrentRuns', 'agents', 'weights'))
     AND :QUOTAPLANE_SCHEMA.quota_json_amount_ok(p_plane -> 'maxConcurrentRuns', false)
     AND :QUOTAPLANE_SCHEMA.quota_json_agents_ok(p_plane -> 'agents', ARRAY['maxConcurrentRuns'])
     AND CASE
           WHEN p_plane -> 'weights' IS NULL OR jsonb_typeof(p_plane -> 'weights') = 'null' THEN true
           WHEN jsonb_typeof(p_plane -> 'weights') <> 'object' THEN false
           ELSE NOT EXISTS (
             SELECT 1 FROM jsonb_each(p_plane -> 'weights') AS w(tenant, weight)
              WHERE CASE WHEN :QUOTAPLANE_SCHEMA.quota_json_amount_ok(w.weight, true) THEN (w.weight #>> '{}')::numeric < 1 ELSE true END)
         END
  END
$fn$;

ALTER TABLE :QUOTAPLANE_SCHEMA.quota_plane ADD CONSTRAINT quota_plane_json_ok CHECK (:QUOTAPLANE_SCHEMA.quota_plane_json_ok(ceiling_json));

ALTER TABLE :QUOTAPLANE_SCHEMA.quota_tenants ADD CONSTRAINT quota_tenants_quota_json_ok CHECK (:QUOTAPLANE_SCHEMA.quota_json_ok(quota_json));

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_halt_row_ok(p_scope text, p_basis text, p_at_ms bigint) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT (p_scope = 'tenant'
          OR p_scope LIKE 'agent:_%'
          OR p_scope LIKE 'subject:_%'
          OR p_scope ~ '^revision:[0-9a-fA-F]{64}$')
     AND p_basis IN ('asserted', 'authenticated')
     AND p_at_ms BETWEEN -9007199254740991 AND 9007199254740991
$fn$;


-- ── The bound on every figure of the books (docs/design/rules.md#p7) ─────────────────────────────────────────────
-- quota_require_fits raises SQLSTATE QP001 when total + adding would pass 2^53 − 1, with the input
-- field as the message, the figure's name as the detail and the two operands as the hint
-- ('<total> <adding>'). Raised inside a decision function, it rolls the whole call back, so
-- nothing is written; the TypeScript side turns it into the same INVALID_ARGUMENT the SQLite
-- adapter throws. Callers test total + adding inline first and call it only when it will raise: a
-- call is a statement of its own, a noticeable part of a decision's cost.

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_require_fits(p_field text, p_what text, p_total numeric, p_adding numeric) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  IF coalesce(p_total, 0) + coalesce(p_adding, 0) > 9007199254740991 THEN
    RAISE EXCEPTION USING ERRCODE = 'QP001', MESSAGE = p_field, DETAIL = p_what,
      HINT = coalesce(p_total, 0)::text || ' ' || coalesce(p_adding, 0)::text;
  END IF;
END
$fn$;


-- ── The only writers of the running set and of holds ────────────────────────────────────────
-- Each moves the matching counter in the same transaction (quota_figures.running, the held_*
-- columns of quota_spent), so a decision reads one row instead of counting a set or summing a
-- period. The slot set stays a set: a slot taken twice is one member and moves the counter once.
-- quota_slot_take: the run joins the set (first admission instant kept); +1 when it was absent.
-- quota_slot_give: the run leaves the set; −1 and true when it was a member.
-- quota_held_move_counted: adds amounts of one sign to the hold sums of a hold's month and day.
-- quota_hold_put: a new hold in a period. quota_hold_drop: the hold deleted; answers whether there
-- was one. quota_hold_carry: the hold moved whole to another period (docs/design/rules.md#c17). A
-- hold counts in its month and, when known, its day, so the hold sums of a month include its days'
-- whatever period kind was in force (docs/design/rules.md#l82). The per-agent counterparts move in
-- the same calls: a slot of an agent's run moves quota_agent_figures, a hold of an agent's run the
-- held_* of quota_agent_spent. The hold row is locked before its period's figures, and a slot
-- before the tenant's figures, the order every caller takes them in.

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_slot_take(p_tenant text, p_run text, p_at_ms bigint, p_agent text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_running (tenant, run_id, admitted_at_ms, agent_name) VALUES (p_tenant, p_run, p_at_ms, p_agent)
    ON CONFLICT (tenant, run_id) DO NOTHING;
  IF FOUND THEN
    INSERT INTO :QUOTAPLANE_SCHEMA.quota_figures AS f (tenant, running) VALUES (p_tenant, 1)
      ON CONFLICT (tenant) DO UPDATE SET running = f.running + 1;
    IF p_agent IS NOT NULL THEN
      INSERT INTO :QUOTAPLANE_SCHEMA.quota_agent_figures AS a (tenant, agent_name, running) VALUES (p_tenant, p_agent, 1)
        ON CONFLICT (tenant, agent_name) DO UPDATE SET running = a.running + 1;
    END IF;
  END IF;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_slot_give(p_tenant text, p_run text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  v_agent text;
BEGIN
  DELETE FROM :QUOTAPLANE_SCHEMA.quota_running WHERE tenant = p_tenant AND run_id = p_run RETURNING agent_name INTO v_agent;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE :QUOTAPLANE_SCHEMA.quota_figures SET running = running - 1 WHERE tenant = p_tenant;
  IF v_agent IS NOT NULL THEN
    UPDATE :QUOTAPLANE_SCHEMA.quota_agent_figures SET running = running - 1 WHERE tenant = p_tenant AND agent_name = v_agent;
  END IF;
  RETURN true;
END
$fn$;

-- The agent's hold sums of one period, as quota_held_move_counted moves the tenant's. The
-- tenant's sums bound these (an agent's holds are among the tenant's), so no overflow check here.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_agent_held_move(p_tenant text, p_agent text, p_period text, p_tokens numeric, p_minor_units numeric)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_agent IS NULL OR (p_tokens = 0 AND p_minor_units = 0) THEN
    RETURN;
  END IF;
  IF p_tokens <= 0 AND p_minor_units <= 0 THEN
    UPDATE :QUOTAPLANE_SCHEMA.quota_agent_spent
       SET held_tokens = held_tokens + p_tokens, held_minor_units = held_minor_units + p_minor_units
     WHERE tenant = p_tenant AND agent_name = p_agent AND period = p_period;
    RETURN;
  END IF;
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_agent_spent AS q (tenant, agent_name, period, tokens, minor_units, held_tokens, held_minor_units)
    VALUES (p_tenant, p_agent, p_period, 0, 0, p_tokens, p_minor_units)
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
      held_tokens = q.held_tokens + excluded.held_tokens,
      held_minor_units = q.held_minor_units + excluded.held_minor_units;
END
$fn$;

-- The UTC day an amount of period p_period counts in when it is held or settled at p_at_ms: the
-- period itself when it is a day, the day of p_at_ms when p_period is its month, else NULL.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_day_of(p_period text, p_at_ms bigint) RETURNS text
IMMUTABLE LANGUAGE sql AS $q$
  SELECT CASE
    WHEN length(p_period) = 10 THEN p_period
    WHEN p_at_ms IS NULL OR p_at_ms NOT BETWEEN 0 AND 253402300799999 THEN NULL
    WHEN to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM') = p_period
      THEN to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')
  END
$q$;

-- Moves the hold sums of every period a hold of (p_period, p_day) counts in: its month, then its
-- day when known; then the same keys of the agent's sums when the hold is an agent's. Tenant month,
-- tenant day, agent month, agent day: the order every caller locks rows in. The amounts have one
-- sign. The tenant's two rows move in one statement: a hold that shrinks or leaves was added to
-- them first, so they exist and are updated in place (an upsert would not do: the domain check is
-- applied to the proposed row before the conflict is found); one that grows is upserted. The holds
-- of a period never sum past 2^53 − 1 (docs/design/rules.md#p7): beyond that the call is refused
-- and rolled back whole.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant text, p_period text, p_day text, p_tokens numeric, p_minor_units numeric,
  p_agent text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_month text := left(p_period, 7);
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period WHEN left(p_day, 7) = p_period THEN p_day END;
  v_row record;
BEGIN
  IF p_tokens = 0 AND p_minor_units = 0 THEN
    RETURN;
  END IF;
  IF p_tokens <= 0 AND p_minor_units <= 0 THEN
    UPDATE :QUOTAPLANE_SCHEMA.quota_spent
       SET held_tokens = held_tokens + p_tokens, held_minor_units = held_minor_units + p_minor_units
     WHERE tenant = p_tenant AND period IN (v_month, v_day);
  ELSE
    FOR v_row IN
      INSERT INTO :QUOTAPLANE_SCHEMA.quota_spent AS q (tenant, period, tokens, minor_units, held_tokens, held_minor_units)
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
        PERFORM :QUOTAPLANE_SCHEMA.quota_require_fits('hold.tokens', 'the holds of period ' || v_row.period || ' (tokens)',
                                        v_row.held_tokens - greatest(p_tokens, 0), greatest(p_tokens, 0));
      END IF;
      IF v_row.held_minor_units > 9007199254740991 THEN
        PERFORM :QUOTAPLANE_SCHEMA.quota_require_fits('hold.minorUnits', 'the holds of period ' || v_row.period || ' (minor units)',
                                        v_row.held_minor_units - greatest(p_minor_units, 0), greatest(p_minor_units, 0));
      END IF;
    END LOOP;
  END IF;
  IF p_agent IS NOT NULL THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_agent_held_move(p_tenant, p_agent, v_month, p_tokens, p_minor_units);
    IF v_day IS NOT NULL THEN
      PERFORM :QUOTAPLANE_SCHEMA.quota_agent_held_move(p_tenant, p_agent, v_day, p_tokens, p_minor_units);
    END IF;
  END IF;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_put(p_tenant text, p_run text, p_period text, p_tokens bigint, p_minor_units bigint,
  p_day text DEFAULT NULL, p_agent text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period ELSE p_day END;
BEGIN
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_reserved (tenant, run_id, period, day, tokens, minor_units, agent_name)
    VALUES (p_tenant, p_run, p_period, v_day, p_tokens, p_minor_units, p_agent);
  PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, p_period, v_day, p_tokens, p_minor_units, p_agent);
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_shrink(p_tenant text, p_run text, p_tokens bigint, p_minor_units bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_old record;
BEGIN
  SELECT period, day, tokens, minor_units, agent_name INTO v_old FROM :QUOTAPLANE_SCHEMA.quota_reserved
   WHERE tenant = p_tenant AND run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  UPDATE :QUOTAPLANE_SCHEMA.quota_reserved
     SET tokens = greatest(tokens - p_tokens, 0), minor_units = greatest(minor_units - p_minor_units, 0)
   WHERE tenant = p_tenant AND run_id = p_run;
  PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, v_old.period, v_old.day,
    greatest(v_old.tokens - p_tokens, 0)::numeric - v_old.tokens,
    greatest(v_old.minor_units - p_minor_units, 0)::numeric - v_old.minor_units, v_old.agent_name);
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_drop(p_tenant text, p_run text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  v_old record;
BEGIN
  DELETE FROM :QUOTAPLANE_SCHEMA.quota_reserved WHERE tenant = p_tenant AND run_id = p_run
    RETURNING period, day, tokens, minor_units, agent_name INTO v_old;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
  RETURN true;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_hold_carry(p_tenant text, p_run text, p_period text, p_day text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_old record;
  v_day text;
BEGIN
  SELECT period, day, tokens, minor_units, agent_name INTO v_old FROM :QUOTAPLANE_SCHEMA.quota_reserved
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
  UPDATE :QUOTAPLANE_SCHEMA.quota_reserved SET period = p_period, day = v_day WHERE tenant = p_tenant AND run_id = p_run;
  -- Both periods' rows in one (sorted) order, so two carries in opposite directions cannot
  -- deadlock.
  IF v_old.period < p_period THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
    PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, p_period, v_day, v_old.tokens, v_old.minor_units, v_old.agent_name);
  ELSE
    PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, p_period, v_day, v_old.tokens, v_old.minor_units, v_old.agent_name);
    PERFORM :QUOTAPLANE_SCHEMA.quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
  END IF;
END
$fn$;


-- ── reserve ─────────────────────────────────────────────────────────────────────────────────
-- One function call, one round trip, one transaction, mirroring reserveInTransaction of the SQLite
-- adapter and the pure admissionConcurrencyRefusal and admissionSpendRefusal of core/: the same
-- fast path, the same order (concurrency with the full count, then spend from one snapshot, only
-- when a hold is asked for and none is held), the same strict-greater comparison, done in numeric
-- so nothing overflows. It answers the figures it decided on; the TypeScript caller rebuilds the
-- refusal value with the core functions from them, so messages and fields come from one place.
-- Admissions of one tenant serialise on a transaction-scoped advisory lock keyed by
-- 'quota-admission:<byte length>:<tenant>' with seed 0 (the length prefix keeps acme apart from a
-- tenant whose name merely begins with it); other tenants never wait. Under READ COMMITTED each
-- statement after the lock reads a snapshot taken after it, so it sees everything the previous
-- holder committed. Outcomes: ok, too-many-runs (with running), spent-out (with figures). The
-- run's agent and the tenant's ceilings for it, and the stored plane-wide ceiling, cover the
-- admission too. When a plane-wide ceiling covers it, the plane lock (quota_plane_lock, seed 3) is
-- taken after the tenant's lock, so the plane-wide counts are exact across every tenant and
-- instance; without one no such lock is taken. Every lock key begins with the quoted schema name:
-- advisory locks are per database, and two quotaplane schemas in one database (two deployments,
-- or tests side by side) must never wait on each other's tenants.

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_admission_lock(p_tenant text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
END
$fn$;

-- The plane lock: taken, after the tenant's admission lock, by every admission that a
-- plane-wide ceiling covers, so the plane-wide counts it reads are exact. Seed 3 keeps it apart
-- from the admission (0), rate (1) and migration (2) locks.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_plane_lock() RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-plane', 3));
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_reserve(
  p_tenant text, p_run text, p_max_runs bigint,
  p_hold_period text, p_hold_tokens bigint, p_hold_minor_units bigint,
  p_limit_tokens bigint, p_limit_minor_units bigint, p_at_ms bigint,
  p_agent text DEFAULT NULL, p_agent_max_runs bigint DEFAULT NULL,
  p_agent_limit_tokens bigint DEFAULT NULL, p_agent_limit_minor_units bigint DEFAULT NULL,
  OUT outcome text, OUT running bigint,
  OUT settled_tokens bigint, OUT settled_minor_units bigint,
  OUT reserved_tokens bigint, OUT reserved_minor_units bigint,
  OUT agent_running bigint, OUT plane_running bigint, OUT plane_agent_running bigint,
  OUT plane_max_runs bigint, OUT plane_agent_max_runs bigint,
  OUT agent_settled_tokens bigint, OUT agent_settled_minor_units bigint,
  OUT agent_reserved_tokens bigint, OUT agent_reserved_minor_units bigint,
  OUT hold_taken boolean)
LANGUAGE plpgsql AS $fn$
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
  SELECT p.ceiling_json INTO v_plane FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1;
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
    PERFORM :QUOTAPLANE_SCHEMA.quota_slot_take(p_tenant, p_run, p_at_ms, p_agent);
    RETURN;
  END IF;
  -- quota_admission_lock's key, inline (a call is a statement of its own; in a batch it is held
  -- already).
  PERFORM pg_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
  -- Lock order: the tenant's lock, then the plane's (a batch takes all its tenants' locks first).
  IF plane_max_runs IS NOT NULL OR plane_agent_max_runs IS NOT NULL THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_plane_lock();
  END IF;
  -- Point reads only: the slot set's size and the period's figures are counters.
  SELECT EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_running WHERE tenant = p_tenant AND run_id = p_run),
         EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_reserved WHERE tenant = p_tenant AND run_id = p_run),
         coalesce((SELECT f.running FROM :QUOTAPLANE_SCHEMA.quota_figures f WHERE f.tenant = p_tenant), 0)
    INTO v_slot_held, v_hold_held, running;
  -- A run holding a slot is never counted against a ceiling; each is compared once, after counting,
  -- narrowest first (core admissionConcurrencyRefusal): agent, tenant, plane-agent, plane.
  IF NOT v_slot_held THEN
    IF p_agent IS NOT NULL AND p_agent_max_runs IS NOT NULL THEN
      agent_running := coalesce((SELECT a.running FROM :QUOTAPLANE_SCHEMA.quota_agent_figures a
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
      plane_agent_running := coalesce((SELECT sum(a.running) FROM :QUOTAPLANE_SCHEMA.quota_agent_figures a WHERE a.agent_name = p_agent), 0);
      IF plane_agent_running >= plane_agent_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
    IF plane_max_runs IS NOT NULL THEN
      plane_running := coalesce((SELECT sum(f.running) FROM :QUOTAPLANE_SCHEMA.quota_figures f), 0);
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
        FROM :QUOTAPLANE_SCHEMA.quota_agent_spent q WHERE q.tenant = p_tenant AND q.agent_name = p_agent AND q.period = p_hold_period;
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
      FROM :QUOTAPLANE_SCHEMA.quota_spent q WHERE q.tenant = p_tenant AND q.period = p_hold_period;
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
    PERFORM :QUOTAPLANE_SCHEMA.quota_hold_put(p_tenant, p_run, p_hold_period, p_hold_tokens, p_hold_minor_units,
                                :QUOTAPLANE_SCHEMA.quota_day_of(p_hold_period, p_at_ms), p_agent);
    hold_taken := true;
  END IF;
  PERFORM :QUOTAPLANE_SCHEMA.quota_slot_take(p_tenant, p_run, p_at_ms, p_agent);
END
$fn$;


-- ── settle ──────────────────────────────────────────────────────────────────────────────────
-- Mirrors settleInTransaction of the SQLite adapter in one function call. A pass's own settle
-- (quota_settle_pass) keeps its receipt in the pass row; quota_settle writes quota_settled, so it
-- first looks at the pass row with the run locked (the pass's settle locks it too, so the two take
-- turns). Its receipt goes in with ON CONFLICT DO NOTHING: a concurrent settle of the same pass
-- waits for the first to commit and then finds its receipt. A receipt found either way answers
-- already-settled when identical in all five payload fields, anything else conflict
-- (docs/design/rules.md#c6, #c7); both changed nothing. Otherwise quota_receipt_apply applies it
-- once: the hold shrinks by the spend floored at 0 (or goes when concluding), the spend accrues to
-- its period with quota_accrue, which refuses (QP001, the whole call rolled back) a total beyond
-- 2^53 − 1, and to the agent's books for a registered run of an agent, and the slot is released
-- when asked. Settlement takes no advisory lock: it moves spend from a hold to the settled total
-- inside one transaction, so any one-statement snapshot sees consistent totals.

-- Adds a settle's spend to the settled totals of its month and, when known, its day (p_day, NULL
-- otherwise), refusing a total beyond 2^53 − 1 before anything is written: both rows are read and
-- locked in one statement (month first), checked in that order, then moved in one statement.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_accrue(p_tenant text, p_month text, p_day text, p_tokens bigint, p_minor_units bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_spent record;
BEGIN
  FOR v_spent IN
    SELECT q.period, q.tokens, q.minor_units FROM :QUOTAPLANE_SCHEMA.quota_spent q
     WHERE q.tenant = p_tenant AND q.period IN (p_month, p_day) ORDER BY q.period FOR UPDATE
  LOOP
    -- quota_require_fits only when it raises (a call is a statement of its own).
    IF v_spent.tokens::numeric + p_tokens > 9007199254740991 THEN
      PERFORM :QUOTAPLANE_SCHEMA.quota_require_fits('spend.tokens', 'the settled spend of period ' || v_spent.period || ' (tokens)',
                                      v_spent.tokens, p_tokens);
    END IF;
    IF v_spent.minor_units::numeric + p_minor_units > 9007199254740991 THEN
      PERFORM :QUOTAPLANE_SCHEMA.quota_require_fits('spend.minorUnits', 'the settled spend of period ' || v_spent.period || ' (minor units)',
                                      v_spent.minor_units, p_minor_units);
    END IF;
  END LOOP;
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_spent AS q (tenant, period, tokens, minor_units)
    SELECT p_tenant, k.period, p_tokens, p_minor_units
      FROM (VALUES (1, p_month), (2, p_day)) AS k(position, period)
     WHERE k.period IS NOT NULL ORDER BY k.position
    ON CONFLICT (tenant, period) DO UPDATE SET
      tokens = q.tokens + excluded.tokens, minor_units = q.minor_units + excluded.minor_units;
END
$fn$;

-- Adds a settle's spend to one agent's settled total of one period. The tenant's total,
-- accrued first by quota_accrue, bounds it (the agent's spend is part of it), so no check here.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_agent_accrue(p_tenant text, p_agent text, p_period text, p_tokens bigint, p_minor_units bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_agent_spent AS q (tenant, agent_name, period, tokens, minor_units)
    VALUES (p_tenant, p_agent, p_period, p_tokens, p_minor_units)
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
      tokens = q.tokens + excluded.tokens, minor_units = q.minor_units + excluded.minor_units;
END
$fn$;

-- What a new receipt does to the books (docs/design/rules.md#c5, #c13, #c14), for quota_settle and
-- quota_settle_pass: shrink the hold by the spend floored at 0 (or delete it when concluding),
-- accrue the spend to its period's month and, when known, its day (quota_accrue refuses a total
-- beyond 2^53 − 1), and to the agent's books for a run of an agent (p_agent), then release the slot
-- when asked. The hold moves before the period's settled total, so its row is locked before the
-- period's.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_receipt_apply(
  p_tenant text, p_run text, p_period text, p_day text, p_tokens bigint, p_minor_units bigint,
  p_release_slot boolean, p_concludes boolean, p_agent text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period WHEN left(p_day, 7) = p_period THEN p_day END;
BEGIN
  IF p_concludes THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_hold_drop(p_tenant, p_run);
  ELSE
    PERFORM :QUOTAPLANE_SCHEMA.quota_hold_shrink(p_tenant, p_run, p_tokens, p_minor_units);
  END IF;
  -- What a day settled also counts in its month (docs/design/rules.md#l80): month row first, then
  -- the day's.
  IF p_period IS NOT NULL THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_accrue(p_tenant, left(p_period, 7), v_day, p_tokens, p_minor_units);
    IF p_agent IS NOT NULL THEN
      PERFORM :QUOTAPLANE_SCHEMA.quota_agent_accrue(p_tenant, p_agent, left(p_period, 7), p_tokens, p_minor_units);
      IF v_day IS NOT NULL THEN
        PERFORM :QUOTAPLANE_SCHEMA.quota_agent_accrue(p_tenant, p_agent, v_day, p_tokens, p_minor_units);
      END IF;
    END IF;
  END IF;
  IF p_release_slot THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_slot_give(p_tenant, p_run);
  END IF;
END
$fn$;

-- Whether a stored receipt (p_stored_*) carries the payload of a settle asking again
-- (docs/design/rules.md#c6, #c7): all five fields the same, the period NULL on both counting as the
-- same. Every settle answers a retry with it, wherever the receipt is kept (a plain SQL function
-- the planner inlines).
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_same_receipt(
  p_period text, p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean,
  p_stored_period text, p_stored_tokens bigint, p_stored_minor_units bigint, p_stored_release_slot boolean,
  p_stored_concludes boolean) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $q$
  SELECT p_stored_period IS NOT DISTINCT FROM p_period AND p_stored_tokens = p_tokens AND p_stored_minor_units = p_minor_units
     AND p_stored_release_slot = p_release_slot AND p_stored_concludes = p_concludes
$q$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_settle(
  p_tenant text, p_run text, p_epoch bigint, p_period text,
  p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean, p_day text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql AS $fn$
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
  IF EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_pruned x WHERE x.tenant = p_tenant AND x.run_id = p_run) THEN
    RETURN 'pruned';
  END IF;
  -- A registered run is locked first, as quota_settle_pass locks it, so this settle and the pass's
  -- own settle of the same pass take turns, and the later one finds the earlier one's receipt.
  SELECT r.agent_name INTO v_agent FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  -- The pass is read by a statement of its own, after the lock. Had it been joined to the locking
  -- read, a wait for the lock would hand back the run row as committed meanwhile but the pass row
  -- as it stood when that read began: the receipt the lock holder just wrote would be missed, and
  -- the pass settled twice.
  IF FOUND THEN
    SELECT p.period, p.takes_slot, p.receipt_tokens, p.receipt_minor_units, p.receipt_concludes
      INTO v_pass_period, v_pass_takes_slot, v_own_tokens, v_own_minor_units, v_own_concludes
      FROM :QUOTAPLANE_SCHEMA.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  END IF;
  IF v_own_tokens IS NOT NULL THEN
    RETURN CASE WHEN :QUOTAPLANE_SCHEMA.quota_same_receipt(p_period, p_tokens, p_minor_units, p_release_slot, p_concludes,
                       v_pass_period, v_own_tokens, v_own_minor_units, v_pass_takes_slot, v_own_concludes)
                THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_settled (tenant, run_id, epoch, period, tokens, minor_units, release_slot, concludes)
    VALUES (p_tenant, p_run, p_epoch, p_period, p_tokens, p_minor_units, p_release_slot, p_concludes)
    ON CONFLICT (tenant, run_id, epoch) DO NOTHING;
  IF NOT FOUND THEN
    SELECT :QUOTAPLANE_SCHEMA.quota_same_receipt(p_period, p_tokens, p_minor_units, p_release_slot, p_concludes,
                                   r.period, r.tokens, r.minor_units, r.release_slot, r.concludes)
      INTO v_same
      FROM :QUOTAPLANE_SCHEMA.quota_settled r WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.epoch = p_epoch;
    RETURN CASE WHEN v_same THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  PERFORM :QUOTAPLANE_SCHEMA.quota_receipt_apply(p_tenant, p_run, p_period, p_day, p_tokens, p_minor_units, p_release_slot, p_concludes, v_agent);
  RETURN 'settled';
END
$fn$;


-- ── Rate windows over numbered dispatches ───────────────────────────────────────────────────
-- Each dispatch of a (tenant, grant) gets the next ordinal and is recorded at max(atMs, the grant's
-- latest recorded instant), so recorded instants grow with the ordinal and a window always counts
-- the newest dispatches (docs/design/rules.md#p9). A decision then reads one row per ceiling,
-- whatever the window holds. quota_judge_rate mirrors judgeRateBoundaries and countedSince of core/
-- (and so the answers of checkRate over the recorded instants): first, any ceiling whose window is
-- outside 1 … 2 678 400 s answers uncountable (with its 1-based ceiling_index) before anything is
-- read (docs/design/rules.md#d7); then a ceiling of count C and window W is full when C is 0, or
-- the dispatch numbered latest − C + 1 is stored and recorded strictly after at − W × 1000 (a row
-- counts when its instant is greater; future rows count: docs/design/rules.md#d6). The first full
-- ceiling in list order answers limited with reached (its window's true count: one index seek for
-- the oldest dispatch it counts) and retry_at_ms, the latest over every full ceiling of the instant
-- its deciding dispatch leaves (boundary + W × 1000; at + W × 1000 for a count of 0), never before
-- at. quota_reserve_rate is one serialised transaction per (tenant, grant): an advisory lock on
-- 'quota-rate:<len>:<tenant>:<len>:<grant>' with seed 1 (never the admission lock's seed 0), then a
-- present key answers present unjudged and unpruned (docs/design/rules.md#c33); otherwise prune
-- that grant's rows at or before the store-wide floor (at − 2 678 400 s, never a caller's window:
-- docs/design/rules.md#c38; the grant's counter row stays), judge unless exempt
-- (docs/design/rules.md#c37), and record the dispatch under the next ordinal. A refusal returns
-- normally, so the prune commits.

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_judge_rate(
  p_tenant text, p_grant text, p_counts bigint[], p_windows bigint[], p_at_ms bigint,
  OUT outcome text, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint)
LANGUAGE plpgsql AS $fn$
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
  SELECT g.last_ordinal INTO v_latest FROM :QUOTAPLANE_SCHEMA.quota_rate_grants g WHERE g.tenant = p_tenant AND g.grant_ref = p_grant;
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
      SELECT r.reserved_at_ms INTO v_boundary FROM :QUOTAPLANE_SCHEMA.quota_rate r
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
  SELECT r.ordinal INTO v_first FROM :QUOTAPLANE_SCHEMA.quota_rate r
   WHERE r.tenant = p_tenant AND r.grant_ref = p_grant AND r.reserved_at_ms > p_at_ms - p_windows[ceiling_index] * 1000
   ORDER BY r.reserved_at_ms, r.ordinal LIMIT 1;
  reached := CASE WHEN v_first IS NULL THEN 0 ELSE v_latest - v_first + 1 END;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_reserve_rate(
  p_tenant text, p_grant text, p_run text, p_dispatch text,
  p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean,
  OUT outcome text, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_last_ordinal bigint;
  v_last_at_ms bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(
    ':QUOTAPLANE_SCHEMA.quota-rate:' || octet_length(p_tenant) || ':' || p_tenant || ':' || octet_length(p_grant) || ':' || p_grant, 1));
  PERFORM 1 FROM :QUOTAPLANE_SCHEMA.quota_rate
   WHERE tenant = p_tenant AND grant_ref = p_grant AND run_id = p_run AND dispatch = p_dispatch;
  IF FOUND THEN
    outcome := 'present';
    RETURN;
  END IF;
  DELETE FROM :QUOTAPLANE_SCHEMA.quota_rate
   WHERE tenant = p_tenant AND grant_ref = p_grant AND reserved_at_ms <= p_at_ms - 2678400000;
  outcome := 'ok';
  IF NOT p_exempt THEN
    SELECT j.outcome, j.ceiling_index, j.reached, j.retry_at_ms INTO outcome, ceiling_index, reached, retry_at_ms
      FROM :QUOTAPLANE_SCHEMA.quota_judge_rate(p_tenant, p_grant, p_counts, p_windows, p_at_ms) j;
    IF outcome <> 'ok' THEN
      RETURN;
    END IF;
  END IF;
  SELECT g.last_ordinal, g.last_at_ms INTO v_last_ordinal, v_last_at_ms
    FROM :QUOTAPLANE_SCHEMA.quota_rate_grants g WHERE g.tenant = p_tenant AND g.grant_ref = p_grant;
  v_last_ordinal := coalesce(v_last_ordinal, 0) + 1;
  v_last_at_ms := greatest(p_at_ms, coalesce(v_last_at_ms, p_at_ms));
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_rate (tenant, grant_ref, ordinal, run_id, dispatch, reserved_at_ms)
    VALUES (p_tenant, p_grant, v_last_ordinal, p_run, p_dispatch, v_last_at_ms);
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_rate_grants AS g (tenant, grant_ref, last_ordinal, last_at_ms)
    VALUES (p_tenant, p_grant, v_last_ordinal, v_last_at_ms)
    ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms;
END
$fn$;


-- ── The run lifecycle: leases, Withheld, the sweep ──────────────────────────────────────────
-- quota_first_grant, quota_resume, quota_settle_pass, quota_heartbeat, quota_dispatch and
-- quota_sweep_run each mirror the SQLite adapter's body of the same operation and the pure rules
-- of core/lifecycle/run-rules.ts. Every function that acts on an existing run locks its registry row first
-- (FOR UPDATE), so the operations of one run serialise as they do on SQLite's single writer: a
-- heartbeat and a sweep of one run cannot interleave (the sweep would strand a run whose lease was
-- just renewed), and rows are always locked in one order (run, then hold and slot, then pass), so
-- nothing deadlocks. Faults come back as outcome values with the facts they were decided on, and
-- TypeScript throws the error with the shared wording (fencePass, closedRunError, withheldBy, …);
-- nothing was written on those paths. A withheld answer's one write (the run marked withheld) is
-- made here (docs/design/rules.md#l47).

-- The subject-halt check of running work (docs/design/rules.md#l47; run-rules withheldBy): one
-- read of the tenant's halts. An unreadable halt row answers 'unreadable-halts' (TypeScript decodes
-- the rows and throws STORE_CORRUPT); a subject halt on a principal of the chain marks the run
-- withheld (the instant stays when it was withheld already) and answers 'withheld'; else 'clear'.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_withhold_check(p_tenant text, p_run text, p_chain jsonb, p_at_ms bigint,
  OUT verdict text, OUT halts json)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_unreadable boolean;
  v_covering boolean;
BEGIN
  verdict := 'clear';
  SELECT coalesce(bool_or(NOT :QUOTAPLANE_SCHEMA.quota_halt_row_ok(h.scope, h.by_basis, h.at_ms)), false),
         coalesce(bool_or(p_chain IS NOT NULL AND h.scope LIKE 'subject:_%' AND p_chain ? substr(h.scope, 9)), false)
    INTO v_unreadable, v_covering
    FROM :QUOTAPLANE_SCHEMA.quota_halted h WHERE h.tenant = p_tenant;
  IF v_unreadable THEN
    verdict := 'unreadable-halts';
    halts := (SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      FROM :QUOTAPLANE_SCHEMA.quota_halted h WHERE h.tenant = p_tenant);
    RETURN;
  END IF;
  IF v_covering THEN
    UPDATE :QUOTAPLANE_SCHEMA.quota_runs r SET status = 'withheld', status_since_ms = p_at_ms
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status <> 'withheld';
    verdict := 'withheld';
    halts := (SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      FROM :QUOTAPLANE_SCHEMA.quota_halted h WHERE h.tenant = p_tenant);
  END IF;
END
$fn$;

-- An admission retry answers pass 1 as first granted; a closed run is refused.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_first_grant(
  p_tenant text, p_run text, p_status text,
  OUT outcome text, OUT grant_period text, OUT hold_tokens bigint, OUT hold_minor_units bigint,
  OUT lease_expires_at_ms bigint)
LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_status IN ('concluded', 'released') THEN
    outcome := 'closed';
    RETURN;
  END IF;
  SELECT p.period, p.hold_tokens, p.hold_minor_units, p.lease_expires_at_ms
    INTO grant_period, hold_tokens, hold_minor_units, lease_expires_at_ms
    FROM :QUOTAPLANE_SCHEMA.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = 1;
  outcome := CASE WHEN FOUND THEN 'existing' ELSE 'first-pass-missing' END;
END
$fn$;

-- Resume (docs/design/rules.md#l15–#l17): never gated by concurrency, spend or workload halts; a
-- subject halt on the chain answers withheld and opens nothing. Otherwise the period of atMs under
-- the stored quota, the hold carried there whole, the next epoch, status running since atMs.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_resume(
  p_tenant text, p_run text, p_at_ms bigint, p_lease_ms bigint, p_month_key text, p_day_key text,
  OUT outcome text, OUT run_status text, OUT chain_json text, OUT halts json,
  OUT grant_epoch bigint, OUT grant_period text,
  OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_chain jsonb;
  v_check record;
BEGIN
  SELECT r.status, r.chain_json INTO run_status, v_chain
    FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  IF run_status IN ('concluded', 'released') THEN
    outcome := 'closed';
    RETURN;
  END IF;
  SELECT * INTO v_check FROM :QUOTAPLANE_SCHEMA.quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  SELECT CASE WHEN coalesce(t.quota_json ->> 'period', 'monthly') = 'daily' THEN p_day_key ELSE p_month_key END
    INTO grant_period FROM :QUOTAPLANE_SCHEMA.quota_tenants t WHERE t.tenant = p_tenant;
  grant_period := coalesce(grant_period, p_month_key);
  PERFORM :QUOTAPLANE_SCHEMA.quota_hold_carry(p_tenant, p_run, grant_period, p_day_key);
  UPDATE :QUOTAPLANE_SCHEMA.quota_runs r SET status = 'running', last_epoch = r.last_epoch + 1, status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run
   RETURNING r.last_epoch INTO grant_epoch;
  SELECT q.tokens, q.minor_units INTO hold_tokens, hold_minor_units
    FROM :QUOTAPLANE_SCHEMA.quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint;
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, grant_epoch, grant_period, false, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'resumed';
END
$fn$;

-- The end of a pass (docs/design/rules.md#l19–#l22): the receipt from the pass row. A pass has one
-- receipt: its own (receipt_* in its row, written here) or one the port's quota_settle wrote;
-- either is answered as a retry (already-settled, or conflict for another payload). A new receipt
-- is applied by quota_receipt_apply, written into the pass row with the instant it was settled,
-- and, when the pass is the run's latest, moves the run's status (run-rules statusAfterSettle:
-- released stays released, concluding concludes, withheld stays withheld, else paused; the instant
-- moves only with the status). The run row is locked first, so settles of one pass take turns.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_settle_pass(
  p_tenant text, p_run text, p_epoch bigint, p_tokens bigint, p_minor_units bigint,
  p_concludes boolean, p_at_ms bigint,
  OUT outcome text, OUT receipt_period text, OUT receipt_release_slot boolean,
  OUT pass_hold_tokens bigint, OUT pass_hold_minor_units bigint)
LANGUAGE plpgsql AS $fn$
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
    FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  -- The pass's receipt is its own (receipt_*) or the port's (x), never both: the stored one is
  -- whichever is there.
  SELECT p.period, p.takes_slot, p.started_at_ms, p.hold_tokens, p.hold_minor_units,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.period ELSE x.period END,
         coalesce(p.receipt_tokens, x.tokens),
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_minor_units ELSE x.minor_units END,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.takes_slot ELSE x.release_slot END,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_concludes ELSE x.concludes END,
         EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_pruned z WHERE z.tenant = p.tenant AND z.run_id = p.run_id)
    INTO receipt_period, receipt_release_slot, v_started_at_ms, pass_hold_tokens, pass_hold_minor_units,
         v_stored_period, v_stored_tokens, v_stored_minor_units, v_stored_release_slot, v_stored_concludes,
         v_pruned
    FROM :QUOTAPLANE_SCHEMA.quota_passes p
    LEFT JOIN :QUOTAPLANE_SCHEMA.quota_settled x ON x.tenant = p.tenant AND x.run_id = p.run_id AND x.epoch = p.epoch
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
    outcome := CASE WHEN :QUOTAPLANE_SCHEMA.quota_same_receipt(receipt_period, p_tokens, p_minor_units, receipt_release_slot, p_concludes,
                           v_stored_period, v_stored_tokens, v_stored_minor_units, v_stored_release_slot, v_stored_concludes)
                    THEN 'already-settled' ELSE 'conflict' END;
    RETURN;
  END IF;
  -- A receipt a prune removed is never written again as if new (docs/design/rules.md#r3).
  IF v_pruned THEN
    outcome := 'pruned';
    RETURN;
  END IF;
  PERFORM :QUOTAPLANE_SCHEMA.quota_receipt_apply(p_tenant, p_run, receipt_period, :QUOTAPLANE_SCHEMA.quota_day_of(receipt_period, v_started_at_ms),
                                   p_tokens, p_minor_units, receipt_release_slot, p_concludes, v_agent);
  UPDATE :QUOTAPLANE_SCHEMA.quota_passes p
     SET settled_at_ms = p_at_ms, receipt_tokens = p_tokens, receipt_minor_units = p_minor_units, receipt_concludes = p_concludes
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  v_next := CASE
    WHEN v_status = 'released' THEN 'released'
    WHEN p_concludes THEN 'concluded'
    WHEN v_status = 'withheld' THEN 'withheld'
    ELSE 'paused'
  END;
  UPDATE :QUOTAPLANE_SCHEMA.quota_runs r SET status = v_next, status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.last_epoch = p_epoch AND r.status <> v_next;
  -- The slot this pass gives back goes to the tenant's waiters in this transaction.
  IF receipt_release_slot AND (EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL)) THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_grant_waiters(p_tenant, p_at_ms);
  END IF;
  outcome := 'settled';
END
$fn$;

-- A heartbeat (docs/design/rules.md#l42–#l44): fence the pass (run-rules fencePass decides in
-- TypeScript from the facts returned), answer withheld under a subject halt, else renew the lease
-- to max(current, atMs + leaseMs) and set a withheld run whose halt is gone running again.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_heartbeat(
  p_tenant text, p_run text, p_epoch bigint, p_at_ms bigint, p_lease_ms bigint,
  OUT outcome text, OUT run_status text, OUT last_epoch bigint, OUT pass_found boolean,
  OUT pass_settled_at_ms bigint, OUT chain_json text, OUT halts json, OUT lease_expires_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_chain jsonb;
  v_check record;
BEGIN
  SELECT r.status, r.last_epoch, r.chain_json INTO run_status, last_epoch, v_chain
    FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  SELECT true, p.settled_at_ms INTO pass_found, pass_settled_at_ms
    FROM :QUOTAPLANE_SCHEMA.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  pass_found := coalesce(pass_found, false);
  IF NOT pass_found OR run_status IN ('concluded', 'released') OR p_epoch < last_epoch
     OR pass_settled_at_ms IS NOT NULL OR run_status = 'stranded' THEN
    outcome := 'fenced';
    RETURN;
  END IF;
  SELECT * INTO v_check FROM :QUOTAPLANE_SCHEMA.quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  UPDATE :QUOTAPLANE_SCHEMA.quota_passes p
     SET lease_expires_at_ms = greatest(p.lease_expires_at_ms, least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint)
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch
   RETURNING p.lease_expires_at_ms INTO lease_expires_at_ms;
  UPDATE :QUOTAPLANE_SCHEMA.quota_runs r SET status = 'running', status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'withheld';
  outcome := 'renewed';
END
$fn$;

-- A run's dispatch (docs/design/rules.md#l45, #l47): the run must be open; with an epoch the pass
-- is fenced; a subject halt answers withheld and counts nothing; with an epoch the lease is
-- renewed (also when the rate answer is a refusal: the pass is alive); then the caller's ceilings
-- followed by the stored quota's for the grant go through quota_reserve_rate.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_dispatch(
  p_tenant text, p_run text, p_grant text, p_dispatch text,
  p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean, p_epoch bigint, p_lease_ms bigint,
  OUT outcome text, OUT run_status text, OUT last_epoch bigint, OUT pass_found boolean,
  OUT pass_settled_at_ms bigint, OUT chain_json text, OUT halts json,
  OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint,
  OUT configured_counts bigint[], OUT configured_windows bigint[])
LANGUAGE plpgsql AS $fn$
DECLARE
  v_chain jsonb;
  v_check record;
  v_judged record;
BEGIN
  SELECT r.status, r.last_epoch, r.chain_json INTO run_status, last_epoch, v_chain
    FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
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
      FROM :QUOTAPLANE_SCHEMA.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
    pass_found := coalesce(pass_found, false);
    IF NOT pass_found OR p_epoch < last_epoch OR pass_settled_at_ms IS NOT NULL OR run_status = 'stranded' THEN
      outcome := 'fenced';
      RETURN;
    END IF;
  END IF;
  SELECT * INTO v_check FROM :QUOTAPLANE_SCHEMA.quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  IF p_epoch IS NOT NULL AND p_lease_ms IS NOT NULL THEN
    UPDATE :QUOTAPLANE_SCHEMA.quota_passes p
       SET lease_expires_at_ms = greatest(p.lease_expires_at_ms, least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint)
     WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
    UPDATE :QUOTAPLANE_SCHEMA.quota_runs r SET status = 'running', status_since_ms = p_at_ms
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'withheld';
  END IF;
  SELECT coalesce(array_agg((e.ceiling ->> 'count')::numeric::bigint ORDER BY e.position), '{}'),
         coalesce(array_agg((e.ceiling ->> 'windowSeconds')::numeric::bigint ORDER BY e.position), '{}')
    INTO configured_counts, configured_windows
    FROM :QUOTAPLANE_SCHEMA.quota_tenants t,
         jsonb_array_elements(t.quota_json -> 'rateCeilings' -> p_grant) WITH ORDINALITY AS e(ceiling, position)
   WHERE t.tenant = p_tenant;
  SELECT * INTO v_judged FROM :QUOTAPLANE_SCHEMA.quota_reserve_rate(
    p_tenant, p_grant, p_run, p_dispatch,
    p_counts || configured_counts, p_windows || configured_windows, p_at_ms, p_exempt);
  outcome := v_judged.outcome;
  ceiling_index := v_judged.ceiling_index;
  reached := v_judged.reached;
  retry_at_ms := v_judged.retry_at_ms;
END
$fn$;

-- The sweep of one run (docs/design/rules.md#l50, #l51): re-checks under the run's lock that it is
-- registered and has no live pass (a heartbeat that won the race keeps its slot), then gives the
-- slot back and strands a running run since its latest pass's lease lapsed. The hold stays.
-- A waiter's grant nobody collected is not stranded: see quota_requeue_lapsed_grant.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_sweep_run(p_tenant text, p_run text, p_at_ms bigint,
  OUT released_slot boolean, OUT stranded boolean)
LANGUAGE plpgsql AS $fn$
BEGIN
  released_slot := false;
  stranded := false;
  PERFORM 1 FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_passes p
              WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms > p_at_ms) THEN
    RETURN;
  END IF;
  -- A waiter's grant that lapsed uncollected: withdrawn whole, the waiter back in its place, and
  -- the room served again (that waiter first, if its own lease still runs).
  released_slot := EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_running WHERE tenant = p_tenant AND run_id = p_run);
  IF :QUOTAPLANE_SCHEMA.quota_requeue_lapsed_grant(p_tenant, p_run, p_at_ms, 0) THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_grant_waiters(p_tenant, p_at_ms);
    RETURN;
  END IF;
  released_slot := :QUOTAPLANE_SCHEMA.quota_slot_give(p_tenant, p_run);
  UPDATE :QUOTAPLANE_SCHEMA.quota_runs r SET status = 'stranded',
         status_since_ms = coalesce((SELECT p.lease_expires_at_ms FROM :QUOTAPLANE_SCHEMA.quota_passes p
                                      WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = r.last_epoch),
                                    r.status_since_ms)
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'running';
  stranded := FOUND;
  IF released_slot AND (EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL)) THEN
    PERFORM :QUOTAPLANE_SCHEMA.quota_grant_waiters(p_tenant, p_at_ms);
  END IF;
END
$fn$;


-- ── Admission ───────────────────────────────────────────────────────────────────────────────
-- One function call, one round trip, one transaction, mirroring admitInTransaction of the SQLite
-- adapter step for step:
-- 0. A run id a prune removed (its tombstone in quota_pruned) answers pruned, nothing written
--    (docs/design/rules.md#r4).
-- 1. A registered run is a retry: its pass-1 grant comes back unchanged, with no new checks
--    (existing, docs/design/rules.md#l13), unless it is closed (concluded or released: closed) or
--    lost its first pass (first-pass-missing).
-- 1½. The tenant's waiting admissions are served first (quota_grant_waiters,
--     docs/design/rules.md#w2).
-- 2. Halts: TypeScript passes the scope keys that would cover this run (tenant, agent:<name>,
--    revision:<digest>, subject:<each principal>). If any of the tenant's halt rows has one of
--    those keys, or cannot be read, every halt row comes back as JSON (halted) and TypeScript picks
--    the narrowest with coveringHalt (docs/design/rules.md#l3) or throws STORE_CORRUPT.
-- 3. The quota: the one given with the request, else the stored one, else none (unlimited); and
--    the tenant's ceilings for the run's agent (agents[<name>]).
-- 4. The hold formula (holdFor): per bounded unit ceiling + width × per-call in numeric
--    (docs/design/rules.md#l6), refused (quota_require_fits, nothing written) beyond 2^53 − 1; a
--    bounded unit the budget leaves open answers unbounded (docs/design/rules.md#l5).
-- 5. quota_reserve in the period of atMs (TypeScript passes both the monthly and the daily key).
-- 6. The run and pass 1 recorded. If a concurrent admission of the very same run id committed its
--    run row first, this call answers as that admission's retry (existing).
-- Every refusal returns before the first write. The figures a refusal was decided on come back
-- with it (quota in force, requested hold, counts and sums), and TypeScript rebuilds the refusal
-- value with the pure functions of core/, so one place words every refusal.

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_admit(
  p_tenant text, p_run text, p_agent_name text, p_agent_digest text, p_chain_json text, p_budget_json text,
  p_max_tokens bigint, p_max_call_tokens bigint, p_max_minor_units bigint, p_max_call_minor_units bigint,
  p_width bigint, p_at_ms bigint, p_lease_ms bigint, p_month_key text, p_day_key text, p_cover_keys text[],
  p_quota_given boolean, p_given_max_runs bigint, p_given_limit_tokens bigint,
  p_given_limit_minor_units bigint, p_given_period text,
  p_given_agent_max_runs bigint, p_given_agent_limit_tokens bigint, p_given_agent_limit_minor_units bigint,
  OUT outcome text, OUT run_status text, OUT grant_period text,
  OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint,
  OUT max_runs bigint, OUT limit_tokens bigint, OUT limit_minor_units bigint,
  OUT running bigint, OUT settled_tokens bigint, OUT settled_minor_units bigint,
  OUT reserved_tokens bigint, OUT reserved_minor_units bigint, OUT halts json,
  OUT agent_max_runs bigint, OUT agent_limit_tokens bigint, OUT agent_limit_minor_units bigint,
  OUT agent_running bigint, OUT plane_running bigint, OUT plane_agent_running bigint,
  OUT plane_max_runs bigint, OUT plane_agent_max_runs bigint,
  OUT agent_settled_tokens bigint, OUT agent_settled_minor_units bigint,
  OUT agent_reserved_tokens bigint, OUT agent_reserved_minor_units bigint)
LANGUAGE plpgsql AS $fn$
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
  SELECT (SELECT r.status FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run),
         EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_pruned x WHERE x.tenant = p_tenant AND x.run_id = p_run),
         EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_halted h
                  WHERE h.tenant = p_tenant
                    AND (h.scope = ANY (p_cover_keys) OR NOT :QUOTAPLANE_SCHEMA.quota_halt_row_ok(h.scope, h.by_basis, h.at_ms))),
         CASE WHEN p_quota_given THEN NULL
              ELSE (SELECT t.quota_json FROM :QUOTAPLANE_SCHEMA.quota_tenants t WHERE t.tenant = p_tenant) END,
         (EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL))
    INTO run_status, v_pruned, v_halted, v_quota, v_waiters;
  -- A run id a prune removed is never admitted again as if new (docs/design/rules.md#r4). A batched
  -- admission holds the tenant's admission lock, as a prune batch does, so no prune commits between
  -- this read and the admission's own.
  IF v_pruned THEN
    outcome := 'pruned';
    RETURN;
  END IF;
  IF run_status IS NOT NULL THEN
    SELECT * INTO v_first FROM :QUOTAPLANE_SCHEMA.quota_first_grant(p_tenant, p_run, run_status);
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
    PERFORM :QUOTAPLANE_SCHEMA.quota_grant_waiters(p_tenant, p_at_ms);
  END IF;

  IF v_halted THEN
    outcome := 'halted';
    SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
                                      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      INTO halts FROM :QUOTAPLANE_SCHEMA.quota_halted h WHERE h.tenant = p_tenant;
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
        PERFORM :QUOTAPLANE_SCHEMA.quota_require_fits('budget.maxTokens', 'the hold maxTokens + width × maxCallTokens',
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
        PERFORM :QUOTAPLANE_SCHEMA.quota_require_fits('budget.maxMinorUnits', 'the hold maxMinorUnits + width × maxCallMinorUnits',
                                        p_max_minor_units, p_width::numeric * p_max_call_minor_units);
      END IF;
      hold_minor_units := p_max_minor_units + p_width::numeric * p_max_call_minor_units;
    END IF;
  END IF;

  SELECT * INTO v_reserve FROM :QUOTAPLANE_SCHEMA.quota_reserve(
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

  INSERT INTO :QUOTAPLANE_SCHEMA.quota_runs AS r
      (tenant, run_id, status, agent_name, agent_digest, chain_json, budget_json, width, admitted_at_ms, last_epoch,
       status_since_ms)
    VALUES (p_tenant, p_run, 'running', p_agent_name, p_agent_digest, p_chain_json::jsonb, p_budget_json, p_width, p_at_ms, 1,
            p_at_ms)
    ON CONFLICT (tenant, run_id) DO NOTHING;
  IF NOT FOUND THEN
    -- A concurrent admission of this very run committed first: this call is its retry.
    SELECT r.status INTO run_status FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
    SELECT * INTO v_first FROM :QUOTAPLANE_SCHEMA.quota_first_grant(p_tenant, p_run, run_status);
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
      FROM :QUOTAPLANE_SCHEMA.quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  END IF;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint;
  INSERT INTO :QUOTAPLANE_SCHEMA.quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, 1, grant_period, true, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'admitted';
END
$fn$;


-- ── Waiting admissions, mirroring sqlite-waiters.ts ─────────────────────────────────────────
-- quota_grant_queue(tenant, at_ms, limit) grants up to limit of the tenant's waiters, first come
-- first served: each live waiter in seq order is admitted by quota_admit exactly as its caller
-- asked: admitted → granted; too-many-runs by the tenant's or the plane's ceiling → stop (nobody
-- behind it goes first); by its own agent's ceiling (in the tenant or plane-wide) → it keeps its
-- place and the next is tried (docs/design/rules.md#w14); any other answer (a halt, spend, a run id
-- taken meanwhile, an amount beyond the bound) → refused, for its caller to hear on collect
-- (docs/design/rules.md#w9). A waiter whose lease lapsed is removed. quota_grant_waiters(tenant,
-- at_ms) serves the queues after a slot freed or before an admission: without a plane-wide
-- maxConcurrentRuns, the tenant's own queue under its admission lock (taken again if the caller
-- holds it: advisory locks are re-entrant); with one, every tenant with live waiters in turn
-- (start-time fair queueing over quota_wait_turns, weighted by the plane ceiling's weights:
-- docs/design/rules.md#w12, #w13), one grant per turn, until the plane is full or nobody fits.
-- Another tenant's lock is only tried there, never waited for: a busy tenant is passed over this
-- time. A transaction-local setting keeps quota_admit (which serves the queues before it decides)
-- from recursing. Every tenant it granted to gets NOTIFY quotaplane_waiters, '<schema>:<tenant>',
-- delivered when the transaction commits. Answers how many it granted. quota_withdraw_grant(tenant,
-- run) takes back a grant nobody collected: slot and hold (with their counters), passes and run row
-- go, as if it had never been admitted (docs/design/rules.md#w18).

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_grant_queue(p_tenant text, p_at_ms bigint, p_limit integer,
  OUT granted integer, OUT stop text)
LANGUAGE plpgsql AS $fn$
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
  FOR v_w IN SELECT * FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting' ORDER BY w.seq LOOP
    IF granted >= p_limit THEN
      stop := 'limit';
      RETURN;
    END IF;
    IF v_w.lease_expires_at_ms <= p_at_ms THEN
      DELETE FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END IF;
    IF EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = v_w.run_id) THEN
      UPDATE :QUOTAPLANE_SCHEMA.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END IF;
    BEGIN
      SELECT * INTO v_a FROM :QUOTAPLANE_SCHEMA.quota_admit(
        p_tenant, v_w.run_id, v_w.agent_name, v_w.agent_digest, v_w.chain_json, v_w.budget_json,
        v_w.max_tokens, v_w.max_call_tokens, v_w.max_minor_units, v_w.max_call_minor_units,
        v_w.width, p_at_ms, v_w.lease_ms, v_month, v_day, v_w.cover_keys,
        v_w.quota_given, v_w.given_max_runs, v_w.given_limit_tokens, v_w.given_limit_minor_units, v_w.given_period,
        v_w.given_agent_max_runs, v_w.given_agent_limit_tokens, v_w.given_agent_limit_minor_units);
    EXCEPTION WHEN OTHERS THEN
      -- Raised before any write of this admission (an amount beyond the bound): its caller hears it
      -- on collect.
      UPDATE :QUOTAPLANE_SCHEMA.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END;
    IF v_a.outcome = 'admitted' THEN
      UPDATE :QUOTAPLANE_SCHEMA.quota_waiters w SET state = 'granted', decided_at_ms = p_at_ms
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
      UPDATE :QUOTAPLANE_SCHEMA.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
    END IF;
  END LOOP;
  IF granted >= p_limit THEN
    stop := 'limit';
  END IF;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_grant_waiters(p_tenant text, p_at_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $fn$
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
    INTO v_plane_max, v_weights FROM :QUOTAPLANE_SCHEMA.quota_plane p WHERE p.id = 1;
  IF v_plane_max IS NULL THEN
    IF NOT EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting') THEN
      RETURN 0;
    END IF;
    PERFORM :QUOTAPLANE_SCHEMA.quota_admission_lock(p_tenant);
    PERFORM set_config('quotaplane.granting', 'on', true);
    SELECT * INTO v_q FROM :QUOTAPLANE_SCHEMA.quota_grant_queue(p_tenant, p_at_ms, 2147483647);
    v_granted := v_q.granted;
    PERFORM set_config('quotaplane.granting', 'off', true);
    IF v_granted > 0 THEN
      PERFORM pg_notify('quotaplane_waiters', ':QUOTAPLANE_SCHEMA:' || p_tenant);
    END IF;
    RETURN v_granted;
  END IF;

  -- The plane-wide ceiling: every tenant with live waiters, in turn (start-time fair queueing).
  IF NOT EXISTS (SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w WHERE w.state = 'waiting' AND w.lease_expires_at_ms > p_at_ms) THEN
    RETURN 0;
  END IF;
  PERFORM set_config('quotaplane.granting', 'on', true);
  LOOP
    v_plane_time := coalesce((SELECT t.vtime FROM :QUOTAPLANE_SCHEMA.quota_wait_turns t WHERE t.tenant = '*'), 0);
    SELECT w.tenant, greatest(coalesce(t.vtime, 0), v_plane_time) AS start INTO v_next, v_start
      FROM (SELECT DISTINCT w.tenant FROM :QUOTAPLANE_SCHEMA.quota_waiters w
             WHERE w.state = 'waiting' AND w.lease_expires_at_ms > p_at_ms AND NOT (w.tenant = ANY (v_passed))) w
      LEFT JOIN :QUOTAPLANE_SCHEMA.quota_wait_turns t ON t.tenant = w.tenant
     ORDER BY 2, 1
     LIMIT 1;
    EXIT WHEN v_next IS NULL;
    -- Another tenant's lock is only tried, never waited for: this transaction may hold the plane
    -- lock, which that tenant's own decisions take after theirs. A busy tenant is passed over.
    IF v_next <> p_tenant
       AND NOT pg_try_advisory_xact_lock(hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(v_next) || ':' || v_next, 0)) THEN
      v_passed := v_passed || v_next;
      CONTINUE;
    END IF;
    IF v_next = p_tenant THEN
      PERFORM :QUOTAPLANE_SCHEMA.quota_admission_lock(p_tenant);
    END IF;
    SELECT * INTO v_q FROM :QUOTAPLANE_SCHEMA.quota_grant_queue(v_next, p_at_ms, 1);
    IF v_q.granted > 0 THEN
      v_granted := v_granted + 1;
      v_weight := greatest(1, coalesce((v_weights ->> v_next)::numeric::bigint, 1));
      INSERT INTO :QUOTAPLANE_SCHEMA.quota_wait_turns AS t (tenant, vtime) VALUES (v_next, v_start + greatest(1, 1000000 / v_weight))
        ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
      INSERT INTO :QUOTAPLANE_SCHEMA.quota_wait_turns AS t (tenant, vtime) VALUES ('*', v_start)
        ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
      PERFORM pg_notify('quotaplane_waiters', ':QUOTAPLANE_SCHEMA:' || v_next);
      CONTINUE;
    END IF;
    EXIT WHEN v_q.stop = 'plane-full';
    v_passed := v_passed || v_next;
  END LOOP;
  PERFORM set_config('quotaplane.granting', 'off', true);
  RETURN v_granted;
END
$fn$;

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_withdraw_grant(p_tenant text, p_run text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM 1 FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  PERFORM :QUOTAPLANE_SCHEMA.quota_hold_drop(p_tenant, p_run);
  PERFORM :QUOTAPLANE_SCHEMA.quota_slot_give(p_tenant, p_run);
  DELETE FROM :QUOTAPLANE_SCHEMA.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run;
  DELETE FROM :QUOTAPLANE_SCHEMA.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
END
$fn$;

-- A waiter's grant whose lease lapsed at p_at_ms before its caller collected it: withdrawn whole
-- (quota_withdraw_grant) and the waiter back in its own place, waiting, its lease at least
-- p_lease_expires_at_ms. False (nothing changed) when the run is no such grant. See
-- requeueLapsedGrant of the SQLite adapter.
CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_requeue_lapsed_grant(p_tenant text, p_run text, p_at_ms bigint, p_lease_expires_at_ms bigint)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM :QUOTAPLANE_SCHEMA.quota_waiters w
      JOIN :QUOTAPLANE_SCHEMA.quota_runs r ON r.tenant = w.tenant AND r.run_id = w.run_id
      LEFT JOIN :QUOTAPLANE_SCHEMA.quota_passes p ON p.tenant = w.tenant AND p.run_id = w.run_id AND p.epoch = 1
     WHERE w.tenant = p_tenant AND w.run_id = p_run AND w.state = 'granted'
       AND (r.status = 'stranded' OR (r.status = 'running' AND p.lease_expires_at_ms <= p_at_ms))) THEN
    RETURN false;
  END IF;
  PERFORM :QUOTAPLANE_SCHEMA.quota_withdraw_grant(p_tenant, p_run);
  UPDATE :QUOTAPLANE_SCHEMA.quota_waiters SET state = 'waiting', decided_at_ms = NULL,
         lease_expires_at_ms = greatest(lease_expires_at_ms, p_lease_expires_at_ms)
   WHERE tenant = p_tenant AND run_id = p_run;
  RETURN true;
END
$fn$;


-- ── quota_batch(items jsonb) → jsonb ────────────────────────────────────────────────────────
-- Several decisions of one store instance in one round trip and one transaction. items is an array
-- of {"op": <decision>, "args": [...]} (postgres-batch-ops.ts lists the decisions and their
-- argument types); the answer is an array in the same order, each {"ok": <the function's row as
-- JSON>} or {"error": {"code": <SQLSTATE>, "message": …}}. First, the admission lock (seed 0) of
-- every tenant in the batch is taken in ascending key order. Every row quotaplane writes is keyed
-- by tenant, so while a batch holds its tenants' locks no other batch can touch those tenants'
-- rows: two batches never wait for each other's row locks in opposite orders, and the one lock
-- order makes their advisory waits acyclic. A wait longer than lock_timeout fails the whole batch.
-- An item asked without an instant of its own carries "wait": {"at", "month"?, "day"?, "askedMs",
-- "maxMs"} (docs/design/rules.md#l93): its instant argument (index at) is the plane's clock as the
-- batch was sent, and the time this batch waited for the tenant locks, in whole ms, is added to it
-- (an uncontended batch adds 0; the period keys at month and day are derived again), so the
-- decision is recorded at the instant it is applied. One that has waited longer than maxMs since it
-- was asked (askedMs) is not applied: it raises SQLSTATE QPW01 (DETAIL the ms waited, HINT the
-- bound), its own error like any other (docs/design/rules.md#l94). Its row gets applied_at_ms, the
-- instant used. Then each decision runs in its own subtransaction (a BEGIN … EXCEPTION block): one
-- that raises is rolled back alone, with its SQLSTATE reported for its caller, and the others go
-- on. A cancellation (statement timeout) or a fault at commit fails the whole statement, and
-- nothing in it commits. Keep batches within PostgreSQL's per-backend subtransaction cache (64).

CREATE FUNCTION :QUOTAPLANE_SCHEMA.quota_batch(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
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
    SELECT DISTINCT hashtextextended(':QUOTAPLANE_SCHEMA.quota-admission:' || octet_length(t.tenant) || ':' || t.tenant, 0) AS k
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
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_admit(
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
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_resume(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::bigint,
            (v_args ->> 4)::text,
            (v_args ->> 5)::text));
        WHEN 'settlePass' THEN
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_settle_pass(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::bigint,
            (v_args ->> 4)::bigint,
            (v_args ->> 5)::boolean,
            (v_args ->> 6)::bigint));
        WHEN 'dispatch' THEN
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_dispatch(
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
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_heartbeat(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::bigint,
            (v_args ->> 4)::bigint));
        WHEN 'reserve' THEN
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_reserve(
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
          v_row := jsonb_build_object('outcome', :QUOTAPLANE_SCHEMA.quota_settle(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::bigint,
            (v_args ->> 3)::text,
            (v_args ->> 4)::bigint,
            (v_args ->> 5)::bigint,
            (v_args ->> 6)::boolean,
            (v_args ->> 7)::boolean));
        WHEN 'reserveRate' THEN
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_reserve_rate(
            (v_args ->> 0)::text,
            (v_args ->> 1)::text,
            (v_args ->> 2)::text,
            (v_args ->> 3)::text,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 4, '[]'::jsonb)))::bigint[],
            ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> 5, '[]'::jsonb)))::bigint[],
            (v_args ->> 6)::bigint,
            (v_args ->> 7)::boolean));
        WHEN 'sweepRun' THEN
          v_row := to_jsonb(:QUOTAPLANE_SCHEMA.quota_sweep_run(
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
$fn$;

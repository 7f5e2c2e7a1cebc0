/**
 * The PostgreSQL schema (its one migration; nothing was released before it): every keyspace of
 * contract §2 plus the run registry, passes, tenant quotas, audit log and API keys, so the
 * conformance suite can hold both backends to one behaviour. Beside the authoritative sets, two
 * small tables keep figures as counters updated in place (DESIGN.md decision 16: a decision never
 * scans a set or a period): `quota_figures.running` (the size of the tenant's slot set) and the
 * `held_*` columns of `quota_spent` (the sum of the tenant's holds in that period). Only the
 * functions of `postgres-sql-counters.ts` and `quota_settle` change a slot or a hold, and each moves its counter in
 * the same transaction. Counter tables have a fillfactor of 50 and no index on a counted column,
 * so their updates stay HOT (no index entries, little WAL). Every table leads with `tenant`, so every read
 * is a range over one tenant's prefix (contract §2, invariant 9). Instants are Unix ms in BIGINT
 * (DESIGN.md decision 1); amounts are BIGINT checked to 0 … 2^53 − 1 (decision 2; the domain `quota_amount`). Text keys use
 * the "C" collation, which compares UTF-8 bytes: listings come out bytewise (contract §6.10 port
 * choice) whatever the database's default collation is. `s` is the quoted schema name.
 */
export function postgresSchema(s: string): string {
  const amount = (column: string): string => `${column} ${s}.quota_amount NOT NULL`;
  return `
-- Checked value kinds as domains, not table CHECK constraints. PostgreSQL evaluates a domain's
-- check only on the columns a statement assigns, with the expression its type cache planned once
-- per connection; a table CHECK is read back from the catalog, planned and evaluated on every
-- INSERT and UPDATE of the table, whatever columns change. Same rules, same SQLSTATE (23514) on a
-- violation.
CREATE DOMAIN ${s}.quota_amount AS BIGINT CHECK (VALUE BETWEEN 0 AND 9007199254740991);
CREATE DOMAIN ${s}.quota_sum AS NUMERIC CHECK (VALUE >= 0);
CREATE DOMAIN ${s}.quota_count AS BIGINT CHECK (VALUE >= 0);
CREATE DOMAIN ${s}.quota_ordinal AS BIGINT CHECK (VALUE >= 1);
CREATE DOMAIN ${s}.quota_run_status AS TEXT
  CHECK (VALUE IN ('running', 'paused', 'withheld', 'stranded', 'concluded', 'released'));

-- §2.1 the running set: membership, never a counter; the first admitted_at_ms is kept on retry.
-- agent_name is the agent of the run that took the slot (NULL without one; issue 12).
CREATE TABLE ${s}.quota_running (
  tenant          TEXT COLLATE "C" NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  admitted_at_ms  BIGINT NOT NULL,
  agent_name      TEXT COLLATE "C",
  PRIMARY KEY (tenant, run_id)
);

-- The size of each tenant's running set, moved with every slot taken or given back. The
-- plane-wide running count is its sum over tenants, read only under the plane lock (issue 12).
CREATE TABLE ${s}.quota_figures (
  tenant   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  running  ${s}.quota_count NOT NULL
) WITH (fillfactor = 50);

-- The slots of each agent's runs per tenant (issue 12), moved with the slot like quota_figures;
-- summed over tenants (by agent_name) for a plane-wide per-agent ceiling.
CREATE TABLE ${s}.quota_agent_figures (
  tenant      TEXT COLLATE "C" NOT NULL,
  agent_name  TEXT COLLATE "C" NOT NULL,
  running     ${s}.quota_count NOT NULL,
  PRIMARY KEY (tenant, agent_name)
) WITH (fillfactor = 50);
CREATE INDEX quota_agent_figures_by_agent ON ${s}.quota_agent_figures (agent_name);

-- Settled totals and hold sums per period of one agent's runs in a tenant (issue 12): the same
-- columns and rules as quota_spent, moved by the same functions in the same transactions.
CREATE TABLE ${s}.quota_agent_spent (
  tenant            TEXT COLLATE "C" NOT NULL,
  agent_name        TEXT COLLATE "C" NOT NULL,
  period            TEXT COLLATE "C" NOT NULL,
  ${amount('tokens')},
  ${amount('minor_units')},
  held_tokens       ${s}.quota_sum NOT NULL DEFAULT 0,
  held_minor_units  ${s}.quota_sum NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, agent_name, period)
) WITH (fillfactor = 50);

-- The plane-wide ceiling (issue 12): at most one row, validated with parsePlaneCeiling on every read.
CREATE TABLE ${s}.quota_plane (
  id            INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  ceiling_json  JSONB NOT NULL
);

-- §2.2 settled totals per billing period (tokens, minor_units: only settle adds, nothing ever
-- subtracts; a month's row includes what its days settled, DESIGN.md decision 15), and the sum of
-- the holds counted in that period (a month's includes its days') (held_*: exact, in numeric, read
-- clamped to 2^53 − 1), moved with every hold written, shrunk, carried or dropped.
CREATE TABLE ${s}.quota_spent (
  tenant            TEXT COLLATE "C" NOT NULL,
  period            TEXT COLLATE "C" NOT NULL,
  ${amount('tokens')},
  ${amount('minor_units')},
  held_tokens       ${s}.quota_sum NOT NULL DEFAULT 0,
  held_minor_units  ${s}.quota_sum NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, period)
) WITH (fillfactor = 50);

-- §2.3 one hold per run, in the period it is held against; day is the UTC day it was held or
-- carried on (its period when that is a day; NULL when unknown). A hold counts in its month and
-- in that day, whatever kind was in force (DESIGN.md decision 15).
CREATE TABLE ${s}.quota_reserved (
  tenant  TEXT COLLATE "C" NOT NULL,
  run_id  TEXT COLLATE "C" NOT NULL,
  period  TEXT COLLATE "C" NOT NULL,
  day     TEXT COLLATE "C",
  -- the agent of the run holding it (NULL without one): its spend counts in quota_agent_spent
  agent_name  TEXT COLLATE "C",
  ${amount('tokens')},
  ${amount('minor_units')},
  PRIMARY KEY (tenant, run_id)
);

-- §2.4 receipts written by the port's settle: the whole payload, so a retry can be compared field by
-- field. A pass's own settle keeps its receipt in its quota_passes row instead (receipt_*), which
-- that settle updates anyway: a row and an index entry fewer per cycle (issue 8). A (run, epoch)
-- has at most one receipt, here or there; each settle looks in both.
CREATE TABLE ${s}.quota_settled (
  tenant        TEXT COLLATE "C" NOT NULL,
  run_id        TEXT COLLATE "C" NOT NULL,
  epoch         ${s}.quota_ordinal NOT NULL,
  period        TEXT COLLATE "C",
  ${amount('tokens')},
  ${amount('minor_units')},
  release_slot  BOOLEAN NOT NULL,
  concludes     BOOLEAN NOT NULL,
  PRIMARY KEY (tenant, run_id, epoch)
);

-- §2.5 standing halts: one independent row per scope key.
CREATE TABLE ${s}.quota_halted (
  tenant    TEXT COLLATE "C" NOT NULL,
  scope     TEXT COLLATE "C" NOT NULL,
  reason    TEXT NOT NULL,
  by_actor  TEXT NOT NULL,
  by_basis  TEXT NOT NULL,
  at_ms     BIGINT NOT NULL,
  PRIMARY KEY (tenant, scope)
);

-- §2.6 one row per dispatch of a rate-ceilinged grant, numbered per (tenant, grant) from 1.
-- reserved_at_ms is the recorded instant: never earlier than the grant's latest recorded one, so
-- instants grow with the ordinal, and the C-th most recent dispatch is one point lookup by ordinal
-- (DESIGN.md decision 16). The (run, dispatch) key is the idempotency.
CREATE TABLE ${s}.quota_rate (
  tenant          TEXT COLLATE "C" NOT NULL,
  grant_ref       TEXT COLLATE "C" NOT NULL,
  ordinal         ${s}.quota_ordinal NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  dispatch        TEXT COLLATE "C" NOT NULL,
  reserved_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, grant_ref, ordinal)
);
CREATE UNIQUE INDEX quota_rate_by_key ON ${s}.quota_rate (tenant, grant_ref, run_id, dispatch);
-- Pruning, and the first dispatch a window counts, read one (tenant, grant) by instant.
CREATE INDEX quota_rate_by_instant ON ${s}.quota_rate (tenant, grant_ref, reserved_at_ms);

-- Per (tenant, grant): the latest ordinal and recorded instant, updated in place. Pruning never
-- deletes it, so ordinals keep growing after the rows they numbered are gone.
CREATE TABLE ${s}.quota_rate_grants (
  tenant        TEXT COLLATE "C" NOT NULL,
  grant_ref     TEXT COLLATE "C" NOT NULL,
  last_ordinal  ${s}.quota_ordinal NOT NULL,
  last_at_ms    BIGINT NOT NULL,
  PRIMARY KEY (tenant, grant_ref)
) WITH (fillfactor = 50);

-- A tenant's configured quota (DESIGN.md decision 5), validated with parseQuota on every read.
-- JSONB so the admission function can read the ceilings without a second round trip.
CREATE TABLE ${s}.quota_tenants (
  tenant      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  quota_json  JSONB NOT NULL
);

-- Waiting admissions (issue 12): one row per admission waiting for a slot of its tenant, served
-- first come, first served by seq (per tenant, assigned under the tenant's admission lock). The
-- admission is kept as quota_admit takes it (without its instant), so the transaction that frees
-- a slot can admit it; lease_expires_at_ms is renewed while its caller waits. state: 'waiting';
-- 'granted' (run and pass 1 written, for the caller to collect); 'refused' (something other than
-- concurrency now refuses it; its caller hears what on collect).
CREATE TABLE ${s}.quota_waiters (
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
CREATE UNIQUE INDEX quota_waiters_by_seq ON ${s}.quota_waiters (tenant, seq);

-- The round robin of waiting tenants while the plane-wide ceiling binds (issue 12): start-time fair
-- queueing. vtime is a tenant's virtual time (it grows by 1 000 000 / weight per grant it gets);
-- the row of tenant '*' keeps the plane's virtual time (the start of the latest grant).
CREATE TABLE ${s}.quota_wait_turns (
  tenant  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  vtime   BIGINT NOT NULL CHECK (vtime >= 0)
);

-- A chain is a JSON array of strings: the lifecycle functions read it inside the database (a
-- Withheld answer needs it), so the database refuses what decodeRun would call corrupt.
-- PL/pgSQL, not SQL: PostgreSQL tries to inline a SQL function wherever it plans an expression
-- calling it, which parses its body again each time.
CREATE FUNCTION ${s}.quota_chain_ok(p_chain jsonb) RETURNS boolean
IMMUTABLE LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN CASE
    WHEN jsonb_typeof(p_chain) <> 'array' THEN false
    ELSE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_chain) AS e(principal) WHERE jsonb_typeof(e.principal) <> 'string')
  END;
END
$fn$;
CREATE DOMAIN ${s}.quota_chain AS JSONB CHECK (VALUE IS NULL OR ${s}.quota_chain_ok(VALUE));

-- The run registry the lifecycle composites keep: status follows the latest pass, and
-- status_since_ms is when the run entered it (Unix ms).
CREATE TABLE ${s}.quota_runs (
  tenant           TEXT COLLATE "C" NOT NULL,
  run_id           TEXT COLLATE "C" NOT NULL,
  status           ${s}.quota_run_status NOT NULL,
  agent_name       TEXT,
  agent_digest     TEXT,
  chain_json       ${s}.quota_chain,
  budget_json      TEXT NOT NULL,
  width            ${s}.quota_count NOT NULL,
  admitted_at_ms   BIGINT NOT NULL,
  last_epoch       ${s}.quota_ordinal NOT NULL,
  status_since_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, run_id)
);
-- The sweep reads one tenant's running runs. Partial: a run leaves it when it stops running, so it
-- stays as small as the set of running runs, and the settle that ends a run adds no entry to it
-- (an index over every status took one per status change, for every run ever admitted; issue 8).
-- Listings and the prune walk a tenant's runs by primary key instead (nearly every run is closed).
CREATE INDEX quota_runs_running ON ${s}.quota_runs (tenant, run_id) WHERE status = 'running';

-- Retention (issue 9 fault 6): a prune removes a closed run with its passes and receipts and leaves
-- this row, so a decision about that run id arriving later (a settle retried after a lost answer,
-- an admission under the same id) is refused instead of applied as new. closed_at_ms is when the
-- run concluded or was released, pruned_at_ms when the prune removed it (Unix ms).
CREATE TABLE ${s}.quota_pruned (
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
CREATE TABLE ${s}.quota_passes (
  tenant               TEXT COLLATE "C" NOT NULL,
  run_id               TEXT COLLATE "C" NOT NULL,
  epoch                ${s}.quota_ordinal NOT NULL,
  period               TEXT COLLATE "C" NOT NULL,
  takes_slot           BOOLEAN NOT NULL,
  started_at_ms        BIGINT NOT NULL,
  lease_expires_at_ms  BIGINT NOT NULL,
  settled_at_ms        BIGINT,
  hold_tokens          BIGINT,
  hold_minor_units     BIGINT,
  receipt_tokens       ${s}.quota_amount,
  receipt_minor_units  ${s}.quota_amount,
  receipt_concludes    BOOLEAN,
  PRIMARY KEY (tenant, run_id, epoch)
);
-- Passes whose receipt is unwritten, by lease expiry: the sweep and unsettledPasses read only those.
CREATE INDEX quota_passes_unsettled ON ${s}.quota_passes (tenant, lease_expires_at_ms) WHERE settled_at_ms IS NULL;

-- The append-only audit log, numbered and hash-chained per tenant.
CREATE TABLE ${s}.quota_audit (
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
CREATE INDEX quota_audit_by_action ON ${s}.quota_audit (tenant, action, seq);

-- The API keys of the HTTP service. A key is not a tenant row (an operator key may cover every
-- tenant, '*'), so this table does not lead with tenant. Only the SHA-256 of a key's secret is
-- stored, never the secret; revoked_at_ms stays NULL while the key is usable, a revoked key is kept.
CREATE TABLE ${s}.quotaplane_api_keys (
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
`;
}

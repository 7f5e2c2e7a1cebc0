-- Version 1 of the SQLite schema, the first release's: the slots, holds, settled totals, receipts,
-- halts and rate windows of the store primitives, plus the run registry, passes, tenant quotas,
-- waiting admissions, retention tombstones, the audit log and the HTTP service's API keys. Every
-- table leads with tenant, so every read is a range over one tenant's prefix. Tables are STRICT
-- (an amount can only be an integer) and WITHOUT ROWID (the primary key is the storage order, so
-- tenant ranges are contiguous), but for the two that grow by a row on every admission, quota_runs
-- and quota_passes: those are stored in admission order (a rowid) and read by tenant through a
-- unique index. The unique index of quota_passes leads with the run id instead (see there); it
-- serves only lookups of one run's passes, which name the tenant too, so every scan is still a
-- range over one tenant's prefix. Instants are Unix ms; amounts are integers ≤ 2^53 − 1. TEXT keys
-- use SQLite's default BINARY collation, which compares UTF-8 bytes: listings come out bytewise
-- (docs/design/rules.md#c23). A released migration is never edited: a change is a new file.

-- The running set: membership, never a counter; the first admitted_at_ms is kept on retry.
-- agent_name is the agent of the run that took the slot (NULL without one), so per-agent and
-- plane-wide per-agent ceilings count the same set.
CREATE TABLE quota_running (
  tenant          TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  admitted_at_ms  INTEGER NOT NULL,
  agent_name      TEXT,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;
-- An agent's slots, in one tenant or across every tenant (per-agent ceilings).
CREATE INDEX quota_running_by_agent ON quota_running (agent_name, tenant) WHERE agent_name IS NOT NULL;

-- The plane-wide ceiling: one row, validated with parsePlaneCeiling on every read.
CREATE TABLE quota_plane (
  id            INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  ceiling_json  TEXT    NOT NULL
) STRICT;

-- Settled totals per billing period: only settle writes, nothing ever subtracts.
CREATE TABLE quota_spent (
  tenant       TEXT    NOT NULL,
  period       TEXT    NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  PRIMARY KEY (tenant, period)
) STRICT, WITHOUT ROWID;

-- One hold per run, in the period it is held against.
CREATE TABLE quota_reserved (
  tenant       TEXT    NOT NULL,
  run_id       TEXT    NOT NULL,
  period       TEXT    NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  -- The UTC day a month's hold was taken or carried on, so the hold also counts in that day
  -- whatever period kind is in force later; a day's hold keeps its day.
  day          TEXT,
  -- The agent of the run holding it (NULL without one): its spend counts against that agent's
  -- ceilings.
  agent_name   TEXT,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;
-- No secondary index: a tenant has a hold only per live run, so reserved(period), the admission
-- figures and an agent's figures read the tenant's prefix of the primary key and filter there
-- (their period test, a month counting its days' holds, is a CASE that no index on period serves).
-- An index here would only add a page to every commit that takes or gives back a hold.

-- Settled totals per billing period of one agent's runs in a tenant: accrued by the
-- same settle that accrues quota_spent, to the same month and day keys.
CREATE TABLE quota_agent_spent (
  tenant       TEXT    NOT NULL,
  agent_name   TEXT    NOT NULL,
  period       TEXT    NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  PRIMARY KEY (tenant, agent_name, period)
) STRICT, WITHOUT ROWID;

-- Receipts written by the port's settle: the whole payload, so a retry can be compared field by
-- field. A pass's own settle keeps its receipt in its quota_passes row instead (receipt_*), which
-- that settle writes anyway: a row and an index entry fewer per cycle.
-- A (run, epoch) has at most one receipt, here or there; each settle looks in both.
CREATE TABLE quota_settled (
  tenant        TEXT    NOT NULL,
  run_id        TEXT    NOT NULL,
  epoch         INTEGER NOT NULL CHECK (epoch >= 1),
  period        TEXT,
  tokens        INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units   INTEGER NOT NULL CHECK (minor_units >= 0),
  release_slot  INTEGER NOT NULL CHECK (release_slot IN (0, 1)),
  concludes     INTEGER NOT NULL CHECK (concludes IN (0, 1)),
  PRIMARY KEY (tenant, run_id, epoch)
) STRICT, WITHOUT ROWID;

-- Standing halts: one independent row per scope key.
CREATE TABLE quota_halted (
  tenant    TEXT    NOT NULL,
  scope     TEXT    NOT NULL,
  reason    TEXT    NOT NULL,
  by_actor  TEXT    NOT NULL,
  by_basis  TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL,
  PRIMARY KEY (tenant, scope)
) STRICT, WITHOUT ROWID;

-- One row per dispatch of a rate-ceilinged grant, numbered per (tenant, grant) from 1.
-- reserved_at_ms is the recorded instant: never earlier than the grant's latest recorded one, so
-- instants grow with the ordinal and the C-th most recent dispatch is one point lookup by ordinal.
-- The (run, dispatch) key is the idempotency.
CREATE TABLE quota_rate (
  tenant          TEXT    NOT NULL,
  grant_ref       TEXT    NOT NULL,
  ordinal         INTEGER NOT NULL CHECK (ordinal >= 1),
  run_id          TEXT    NOT NULL,
  dispatch        TEXT    NOT NULL,
  reserved_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (tenant, grant_ref, ordinal)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX quota_rate_by_key ON quota_rate (tenant, grant_ref, run_id, dispatch);
-- Pruning, and the first dispatch a window counts, read one (tenant, grant) by instant.
CREATE INDEX quota_rate_by_instant ON quota_rate (tenant, grant_ref, reserved_at_ms);

-- Per (tenant, grant): the latest ordinal and recorded instant. Pruning never deletes it, so
-- ordinals keep growing after the rows they counted are gone.
CREATE TABLE quota_rate_grants (
  tenant          TEXT    NOT NULL,
  grant_ref       TEXT    NOT NULL,
  last_ordinal    INTEGER NOT NULL CHECK (last_ordinal >= 1),
  last_at_ms      INTEGER NOT NULL,
  PRIMARY KEY (tenant, grant_ref)
) STRICT, WITHOUT ROWID;

-- A tenant's configured quota, validated with parseQuota on every read.
CREATE TABLE quota_tenants (
  tenant      TEXT NOT NULL PRIMARY KEY,
  quota_json  TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The run registry the lifecycle composites keep: status follows the latest pass.
-- Stored in admission order (id), not by tenant: the admissions of one group commit append to the
-- same last page whatever their tenants, and a settle updates a row near it; keyed by tenant,
-- every tenant in a batch would dirty a page of its own. Every read goes through the unique index
-- on (tenant, run_id), so reads stay ranges over one tenant's prefix.
CREATE TABLE quota_runs (
  id              INTEGER PRIMARY KEY,
  tenant          TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  agent_name      TEXT,
  agent_digest    TEXT,
  chain_json      TEXT,
  budget_json     TEXT    NOT NULL,
  width           INTEGER NOT NULL CHECK (width >= 0),
  admitted_at_ms  INTEGER NOT NULL,
  last_epoch      INTEGER NOT NULL CHECK (last_epoch >= 1),
  -- when the run entered its status (Unix ms), so attention can say how long it has been there
  status_since_ms INTEGER,
  UNIQUE (tenant, run_id)
) STRICT;
-- The sweep reads one tenant's running runs. Partial: a run leaves it when it stops running, so it
-- stays as small as the set of running runs and an admission or a settle writes one of its few
-- pages, not a page of an index over every run ever admitted. Listings and the prune walk a
-- tenant's runs by primary key instead (nearly every run there is closed).
CREATE INDEX quota_runs_running ON quota_runs (tenant, run_id) WHERE status = 'running';

-- Retention: a prune removes a closed run with its passes and receipts and leaves
-- this row, so a decision about that run id arriving later (a settle retried after a lost answer,
-- an admission under the same id) is refused with CONFLICT instead of applied as new. closed_at_ms
-- is when the run concluded or was released, pruned_at_ms when the prune removed it (Unix ms).
CREATE TABLE quota_pruned (
  tenant        TEXT    NOT NULL,
  run_id        TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('concluded', 'released')),
  last_epoch    INTEGER NOT NULL CHECK (last_epoch >= 1),
  closed_at_ms  INTEGER NOT NULL,
  pruned_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;

-- One row per pass (run, epoch). hold_* keep the hold the grant reported, so a retried admission
-- returns its first grant unchanged. receipt_* are the receipt of the pass's own settle
-- (settlePass), written with settled_at_ms: its spend and whether it concluded the run. Its period
-- is the pass's, and it released the slot exactly when the pass took one (takes_slot). NULL until
-- then. Stored in the order passes open (id) and read through the unique index, as quota_runs is.
-- The unique index leads with run_id, not tenant: every read of one pass names its tenant and run,
-- and run ids the plane makes are ULIDs, so the passes one group commit opens add their entries to
-- the same last page of the index whatever their tenants (led by tenant, each tenant in a batch
-- would dirty a page of its own). No read walks one tenant's passes through it: the sweep and
-- unsettledPasses read quota_passes_unsettled, overranPasses reads quota_passes_overran.
CREATE TABLE quota_passes (
  id                   INTEGER PRIMARY KEY,
  tenant               TEXT    NOT NULL,
  run_id               TEXT    NOT NULL,
  epoch                INTEGER NOT NULL CHECK (epoch >= 1),
  period               TEXT    NOT NULL,
  takes_slot           INTEGER NOT NULL CHECK (takes_slot IN (0, 1)),
  started_at_ms        INTEGER NOT NULL,
  lease_expires_at_ms  INTEGER NOT NULL,
  settled_at_ms        INTEGER,
  hold_tokens          INTEGER,
  hold_minor_units     INTEGER,
  receipt_tokens       INTEGER CHECK (receipt_tokens >= 0),
  receipt_minor_units  INTEGER CHECK (receipt_minor_units >= 0),
  receipt_concludes    INTEGER CHECK (receipt_concludes IN (0, 1)),
  UNIQUE (run_id, tenant, epoch)
) STRICT;
-- Passes whose receipt is unwritten, by lease expiry: the sweep and unsettledPasses read only
-- these, and a settled pass leaves the index.
CREATE INDEX quota_passes_unsettled ON quota_passes (tenant, lease_expires_at_ms) WHERE settled_at_ms IS NULL;
-- Passes whose own receipt spent more than their hold in a unit held above 0, for overranPasses:
-- its WHERE is the overranPasses query's own test, so that query reads only these.
CREATE INDEX quota_passes_overran ON quota_passes (tenant, run_id, epoch)
  WHERE receipt_tokens IS NOT NULL AND hold_tokens IS NOT NULL
    AND ((hold_tokens > 0 AND receipt_tokens > hold_tokens) OR (hold_minor_units > 0 AND receipt_minor_units > hold_minor_units));

-- Waiting admissions: one row per admission waiting for a slot of its tenant, served
-- first come, first served by seq (per tenant, assigned under the write lock). request_json is the
-- admission as asked (without its instant); the waiter's lease is renewed while its caller waits.
-- state: 'waiting'; 'granted' (its run and pass 1 were written by the transaction that freed the
-- slot, for the caller to collect); 'refused' (something other than concurrency now refuses it).
CREATE TABLE quota_waiters (
  tenant               TEXT    NOT NULL,
  run_id               TEXT    NOT NULL,
  seq                  INTEGER NOT NULL CHECK (seq >= 1),
  state                TEXT    NOT NULL CHECK (state IN ('waiting', 'granted', 'refused')),
  request_json         TEXT    NOT NULL,
  enqueued_at_ms       INTEGER NOT NULL,
  wait_until_ms        INTEGER NOT NULL,
  lease_expires_at_ms  INTEGER NOT NULL,
  decided_at_ms        INTEGER,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;
-- The queue of one tenant in arrival order.
CREATE UNIQUE INDEX quota_waiters_by_seq ON quota_waiters (tenant, seq);

-- The round robin of waiting tenants while the plane-wide ceiling binds: start-time fair
-- queueing. vtime is a tenant's virtual time (it grows by 1 000 000 / weight per grant it gets);
-- the row of tenant '*' keeps the plane's virtual time (the start of the latest grant).
CREATE TABLE quota_wait_turns (
  tenant  TEXT    NOT NULL PRIMARY KEY,
  vtime   INTEGER NOT NULL CHECK (vtime >= 0)
) STRICT, WITHOUT ROWID;

-- The append-only audit log, numbered and hash-chained per tenant.
CREATE TABLE quota_audit (
  tenant       TEXT    NOT NULL,
  seq          INTEGER NOT NULL CHECK (seq >= 1),
  at_ms        INTEGER NOT NULL,
  actor        TEXT    NOT NULL,
  basis        TEXT    NOT NULL,
  action       TEXT    NOT NULL,
  subject      TEXT    NOT NULL,
  detail_json  TEXT    NOT NULL,
  prev_hash    TEXT    NOT NULL,
  hash         TEXT    NOT NULL,
  PRIMARY KEY (tenant, seq)
) STRICT, WITHOUT ROWID;
-- auditLog({ action }) reads one tenant's rows of one action, newest first.
CREATE INDEX quota_audit_by_action ON quota_audit (tenant, action, seq);

-- The API keys of the HTTP service. A key is not a tenant row (an operator key may
-- cover every tenant, '*'), so this table does not lead with tenant. Only the SHA-256 of a key's
-- secret is stored, never the secret, so a copy of the file gives nobody a working key.
-- revoked_at_ms stays NULL while the key is usable; a revoked key is kept, so keys list still
-- shows who acted with it.
CREATE TABLE quotaplane_api_keys (
  key_id         TEXT    NOT NULL PRIMARY KEY,
  key_hash       TEXT    NOT NULL UNIQUE,
  name           TEXT    NOT NULL,
  role           TEXT    NOT NULL CHECK (role IN ('runner', 'operator')),
  tenant         TEXT    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  revoked_at_ms  INTEGER,
  -- a runner key acts for exactly one tenant; only an operator key may cover every tenant
  CHECK (role = 'operator' OR tenant <> '*')
) STRICT;

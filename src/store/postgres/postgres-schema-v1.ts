/**
 * Version 1 of the PostgreSQL schema: the same tables and columns as the SQLite schema (every
 * keyspace of contract §2 plus the run registry, passes, tenant quotas and audit log), so the
 * conformance suite can hold both to one behaviour. Every table leads with `tenant`, so every read
 * is a range over one tenant's prefix (contract §2, invariant 9). Instants are Unix ms in BIGINT
 * (DESIGN.md decision 1); amounts are BIGINT checked to 0 … 2^53 − 1 (decision 2). Text keys use
 * the "C" collation, which compares UTF-8 bytes: listings come out bytewise (contract §6.10 port
 * choice) whatever the database's default collation is. `s` is the quoted schema name.
 */
export function postgresSchemaV1(s: string): string {
  const amount = (column: string): string => `${column} BIGINT NOT NULL CHECK (${column} BETWEEN 0 AND 9007199254740991)`;
  return `
-- §2.1 the running set: membership, never a counter; the first admitted_at_ms is kept on retry.
CREATE TABLE ${s}.quota_running (
  tenant          TEXT COLLATE "C" NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  admitted_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, run_id)
);

-- §2.2 settled totals per billing period: only settle writes, nothing ever subtracts.
CREATE TABLE ${s}.quota_spent (
  tenant  TEXT COLLATE "C" NOT NULL,
  period  TEXT COLLATE "C" NOT NULL,
  ${amount('tokens')},
  ${amount('minor_units')},
  PRIMARY KEY (tenant, period)
);

-- §2.3 one hold per run, in the period it is held against.
CREATE TABLE ${s}.quota_reserved (
  tenant  TEXT COLLATE "C" NOT NULL,
  run_id  TEXT COLLATE "C" NOT NULL,
  period  TEXT COLLATE "C" NOT NULL,
  ${amount('tokens')},
  ${amount('minor_units')},
  PRIMARY KEY (tenant, run_id)
);
-- reserved(period) and the admission figures sum one tenant's holds of one period.
CREATE INDEX quota_reserved_by_period ON ${s}.quota_reserved (tenant, period) INCLUDE (tokens, minor_units);

-- §2.4 pass receipts: the whole payload, so a retry can be compared field by field.
CREATE TABLE ${s}.quota_settled (
  tenant        TEXT COLLATE "C" NOT NULL,
  run_id        TEXT COLLATE "C" NOT NULL,
  epoch         BIGINT NOT NULL CHECK (epoch >= 1),
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

-- §2.6 one row per dispatch of a rate-ceilinged grant; the key is the idempotency.
CREATE TABLE ${s}.quota_rate (
  tenant          TEXT COLLATE "C" NOT NULL,
  grant_ref       TEXT COLLATE "C" NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  dispatch        TEXT COLLATE "C" NOT NULL,
  reserved_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (tenant, grant_ref, run_id, dispatch)
);
-- Pruning and window counts read one (tenant, grant) by instant.
CREATE INDEX quota_rate_by_instant ON ${s}.quota_rate (tenant, grant_ref, reserved_at_ms);

-- A tenant's configured quota (DESIGN.md decision 5), validated with parseQuota on every read.
-- JSONB so the admission function can read the ceilings without a second round trip.
CREATE TABLE ${s}.quota_tenants (
  tenant      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  quota_json  JSONB NOT NULL
);

-- The run registry the lifecycle composites keep: status follows the latest pass.
CREATE TABLE ${s}.quota_runs (
  tenant          TEXT COLLATE "C" NOT NULL,
  run_id          TEXT COLLATE "C" NOT NULL,
  status          TEXT NOT NULL,
  agent_name      TEXT,
  agent_digest    TEXT,
  chain_json      TEXT,
  budget_json     TEXT NOT NULL,
  width           BIGINT NOT NULL CHECK (width >= 0),
  admitted_at_ms  BIGINT NOT NULL,
  last_epoch      BIGINT NOT NULL CHECK (last_epoch >= 1),
  PRIMARY KEY (tenant, run_id)
);

-- One row per pass (run, epoch). hold_* keep the hold the grant reported, so a retried admission
-- returns its first grant unchanged.
CREATE TABLE ${s}.quota_passes (
  tenant               TEXT COLLATE "C" NOT NULL,
  run_id               TEXT COLLATE "C" NOT NULL,
  epoch                BIGINT NOT NULL CHECK (epoch >= 1),
  period               TEXT COLLATE "C" NOT NULL,
  takes_slot           BOOLEAN NOT NULL,
  started_at_ms        BIGINT NOT NULL,
  lease_expires_at_ms  BIGINT NOT NULL,
  settled_at_ms        BIGINT,
  hold_tokens          BIGINT,
  hold_minor_units     BIGINT,
  PRIMARY KEY (tenant, run_id, epoch)
);

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
`;
}

/*
 * The SQL of waiting admissions on SQLite: the queue of each tenant (`quota_waiters`), the fair
 * turns (`quota_wait_turns`), and what a withdrawn grant erases, as named constants with named
 * placeholders (sqlite-queries.ts says how). Mirrors postgres-waiter-queries.ts.
 */

// ── waiting admissions' grants ──────────────────────────────────────────────

/** A waiter stands again in its place, `waiting`, its lease at least @leaseExpiresAtMs. */
export const REQUEUE_WAITER = `UPDATE quota_waiters SET state = 'waiting', decided_at_ms = NULL,
    lease_expires_at_ms = max(lease_expires_at_ms, @leaseExpiresAtMs) WHERE tenant = @tenant AND run_id = @run`;
/** A withdrawn grant's passes. */
export const ERASE_PASSES = 'DELETE FROM quota_passes WHERE tenant = @tenant AND run_id = @run';
/** A withdrawn grant's registry row. */
export const ERASE_RUN = 'DELETE FROM quota_runs WHERE tenant = @tenant AND run_id = @run';
/** A granted waiter's lease, with its pass 1's lease and its run's status (NULL when missing). */
export const SELECT_GRANT_LEASE = `SELECT w.lease_expires_at_ms AS waiter_lease, p.lease_expires_at_ms AS pass_lease, r.status
  FROM quota_waiters w
  LEFT JOIN quota_runs r ON r.tenant = w.tenant AND r.run_id = w.run_id
  LEFT JOIN quota_passes p ON p.tenant = w.tenant AND p.run_id = w.run_id AND p.epoch = 1
  WHERE w.tenant = @tenant AND w.run_id = @run AND w.state = 'granted'`;

// ── waiting admissions ──────────────────────────────────────────────────────

/** The first waiter still waiting after @after, in queue order. */
export const NEXT_WAITING = `SELECT run_id, seq, request_json, lease_expires_at_ms FROM quota_waiters
  WHERE tenant = @tenant AND seq > @after AND state = 'waiting' ORDER BY seq LIMIT 1`;
/** A waiter's place. */
export const SELECT_WAITER = `SELECT run_id, seq, state, enqueued_at_ms, lease_expires_at_ms FROM quota_waiters
  WHERE tenant = @tenant AND run_id = @run`;
/** A waiter's whole row, to put back as it was (RESTORE_WAITER). */
export const SELECT_WAITER_WHOLE = `SELECT tenant, run_id AS run, seq, state, request_json AS requestJson, enqueued_at_ms AS enqueuedAtMs,
    wait_until_ms AS waitUntilMs, lease_expires_at_ms AS leaseExpiresAtMs, decided_at_ms AS decidedAtMs
  FROM quota_waiters WHERE tenant = @tenant AND run_id = @run`;
/** Puts back a row SELECT_WAITER_WHOLE read. */
export const RESTORE_WAITER = `INSERT INTO quota_waiters
  (tenant, run_id, seq, state, request_json, enqueued_at_ms, wait_until_ms, lease_expires_at_ms, decided_at_ms)
  VALUES (@tenant, @run, @seq, @state, @requestJson, @enqueuedAtMs, @waitUntilMs, @leaseExpiresAtMs, @decidedAtMs)`;
/** A new waiter at the back of its tenant's queue. */
export const INSERT_WAITER = `INSERT INTO quota_waiters
  (tenant, run_id, seq, state, request_json, enqueued_at_ms, wait_until_ms, lease_expires_at_ms)
  VALUES (@tenant, @run, coalesce((SELECT max(seq) FROM quota_waiters WHERE tenant = @tenant), 0) + 1, 'waiting',
          @requestJson, @atMs, @untilMs, @leaseExpiresAtMs)`;
/** A waiter decided: granted or refused, at @atMs. */
export const DECIDE_WAITER = `UPDATE quota_waiters SET state = @state, decided_at_ms = @atMs WHERE tenant = @tenant AND run_id = @run`;
/** A waiter leaves the queue. */
export const DELETE_WAITER = 'DELETE FROM quota_waiters WHERE tenant = @tenant AND run_id = @run';
/** Live waiters before @seq. */
export const COUNT_AHEAD = `SELECT count(*) AS ahead FROM quota_waiters
  WHERE tenant = @tenant AND state = 'waiting' AND lease_expires_at_ms > @atMs AND seq < @seq`;
/** Waiters whose lease lapsed at @atMs, in queue order. */
export const LAPSED_WAITERS = `SELECT run_id, state FROM quota_waiters WHERE tenant = @tenant AND lease_expires_at_ms <= @atMs ORDER BY seq`;
/** A tenant's queue figures at @atMs. */
export const QUEUE_FIGURES = `SELECT
    coalesce(sum(state = 'waiting' AND lease_expires_at_ms > @atMs), 0) AS depth,
    min(CASE WHEN state = 'waiting' AND lease_expires_at_ms > @atMs THEN enqueued_at_ms END) AS oldest,
    coalesce(sum(state = 'granted'), 0) AS uncollected
  FROM quota_waiters WHERE tenant = @tenant`;
/** Tenants with a live waiter at @atMs, bytewise. */
export const WAITING_TENANTS = `SELECT DISTINCT tenant FROM quota_waiters
  WHERE state = 'waiting' AND lease_expires_at_ms > @atMs ORDER BY tenant`;
/** A tenant's (or the plane's, '*') virtual time in the fair turns. */
export const SELECT_TURN = 'SELECT vtime FROM quota_wait_turns WHERE tenant = @tenant';
/** Sets a tenant's (or the plane's) virtual time. */
export const UPSERT_TURN = `INSERT INTO quota_wait_turns (tenant, vtime) VALUES (@tenant, @vtime)
  ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime`;
/** Sets a waiter's lease. */
export const SET_WAITER_LEASE = `UPDATE quota_waiters SET lease_expires_at_ms = @leaseExpiresAtMs
  WHERE tenant = @tenant AND run_id = @run`;

import { waitersToServeSql } from './postgres-sql-waiters.js';

/**
 * The run-lifecycle functions (quoted schema `s`; leases, Withheld, the sweep): `quota_first_grant`,
 * `quota_resume`, `quota_settle_pass`, `quota_heartbeat`, `quota_dispatch` and `quota_sweep_run`.
 * Each mirrors the SQLite adapter's body of the same operation and the pure rules of
 * `store/pass-rules.ts`.
 *
 * Every function that acts on an existing run locks its registry row first (`FOR UPDATE`), so the
 * operations of one run serialise as they do on SQLite's single writer: a heartbeat and a sweep of
 * one run cannot interleave (the sweep would strand a run whose lease was just renewed), and rows
 * are always locked in one order (run, then hold and slot, then pass), so nothing deadlocks.
 *
 * Faults come back as outcome values with the facts they were decided on, and TypeScript throws
 * the error with the shared wording (`fencePass`, `closedRunError`, `withheldBy`, …); nothing was
 * written on those paths. A `withheld` answer's one write (the run marked `withheld`) is made here.
 */
export function passFunctionsSql(s: string): string {
  const MAX = '9007199254740991';
  const haltsJson = `(SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      FROM ${s}.quota_halted h WHERE h.tenant = p_tenant)`;
  return `
-- The subject-halt check of running work (DESIGN.md decision 9; pass-rules withheldBy): one read
-- of the tenant's halts. An unreadable halt row answers 'unreadable-halts' (TypeScript decodes the
-- rows and throws STORE_CORRUPT); a subject halt on a principal of the chain marks the run withheld
-- (the instant stays when it was withheld already) and answers 'withheld'; else 'clear'.
CREATE FUNCTION ${s}.quota_withhold_check(p_tenant text, p_run text, p_chain jsonb, p_at_ms bigint,
  OUT verdict text, OUT halts json)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_unreadable boolean;
  v_covering boolean;
BEGIN
  verdict := 'clear';
  SELECT coalesce(bool_or(NOT ${s}.quota_halt_row_ok(h.scope, h.by_basis, h.at_ms)), false),
         coalesce(bool_or(p_chain IS NOT NULL AND h.scope LIKE 'subject:_%' AND p_chain ? substr(h.scope, 9)), false)
    INTO v_unreadable, v_covering
    FROM ${s}.quota_halted h WHERE h.tenant = p_tenant;
  IF v_unreadable THEN
    verdict := 'unreadable-halts';
    halts := ${haltsJson};
    RETURN;
  END IF;
  IF v_covering THEN
    UPDATE ${s}.quota_runs r SET status = 'withheld', status_since_ms = p_at_ms
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status <> 'withheld';
    verdict := 'withheld';
    halts := ${haltsJson};
  END IF;
END
$fn$;

-- An admission retry answers pass 1 as first granted; a closed run is refused.
CREATE FUNCTION ${s}.quota_first_grant(
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
    FROM ${s}.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = 1;
  outcome := CASE WHEN FOUND THEN 'existing' ELSE 'first-pass-missing' END;
END
$fn$;

-- Resume (contract §8.4): never gated by concurrency, spend or workload halts; a subject halt on
-- the chain answers withheld and opens nothing. Otherwise the period of atMs under the stored
-- quota, the hold carried there whole, the next epoch, status running since atMs.
CREATE FUNCTION ${s}.quota_resume(
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
    FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  IF run_status IN ('concluded', 'released') THEN
    outcome := 'closed';
    RETURN;
  END IF;
  SELECT * INTO v_check FROM ${s}.quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  SELECT CASE WHEN coalesce(t.quota_json ->> 'period', 'monthly') = 'daily' THEN p_day_key ELSE p_month_key END
    INTO grant_period FROM ${s}.quota_tenants t WHERE t.tenant = p_tenant;
  grant_period := coalesce(grant_period, p_month_key);
  PERFORM ${s}.quota_hold_carry(p_tenant, p_run, grant_period, p_day_key);
  UPDATE ${s}.quota_runs r SET status = 'running', last_epoch = r.last_epoch + 1, status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run
   RETURNING r.last_epoch INTO grant_epoch;
  SELECT q.tokens, q.minor_units INTO hold_tokens, hold_minor_units
    FROM ${s}.quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, ${MAX})::bigint;
  INSERT INTO ${s}.quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, grant_epoch, grant_period, false, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'resumed';
END
$fn$;

-- The end of a pass (contract §8.3): the receipt from the pass row. A pass has one receipt: its own
-- (receipt_* in its row, written here) or one the port's quota_settle wrote; either is answered as a
-- retry (already-settled, or conflict for another payload). A new receipt is applied by
-- quota_receipt_apply, written into the pass row with the instant it was settled, and, when the pass
-- is the run's latest, moves the run's status (pass-rules statusAfterSettle: released stays
-- released, concluding concludes, withheld stays withheld, else paused; the instant moves only with
-- the status). The run row is locked first, so settles of one pass take turns.
CREATE FUNCTION ${s}.quota_settle_pass(
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
    FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  -- The pass's receipt is its own (receipt_*) or the port's (x), never both: the stored one is whichever is there.
  SELECT p.period, p.takes_slot, p.started_at_ms, p.hold_tokens, p.hold_minor_units,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.period ELSE x.period END,
         coalesce(p.receipt_tokens, x.tokens),
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_minor_units ELSE x.minor_units END,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.takes_slot ELSE x.release_slot END,
         CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_concludes ELSE x.concludes END,
         EXISTS (SELECT 1 FROM ${s}.quota_pruned z WHERE z.tenant = p.tenant AND z.run_id = p.run_id)
    INTO receipt_period, receipt_release_slot, v_started_at_ms, pass_hold_tokens, pass_hold_minor_units,
         v_stored_period, v_stored_tokens, v_stored_minor_units, v_stored_release_slot, v_stored_concludes,
         v_pruned
    FROM ${s}.quota_passes p
    LEFT JOIN ${s}.quota_settled x ON x.tenant = p.tenant AND x.run_id = p.run_id AND x.epoch = p.epoch
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
    outcome := CASE WHEN ${s}.quota_same_receipt(receipt_period, p_tokens, p_minor_units, receipt_release_slot, p_concludes,
                           v_stored_period, v_stored_tokens, v_stored_minor_units, v_stored_release_slot, v_stored_concludes)
                    THEN 'already-settled' ELSE 'conflict' END;
    RETURN;
  END IF;
  -- A receipt a prune removed is never written again as if new (issue 9 fault 6).
  IF v_pruned THEN
    outcome := 'pruned';
    RETURN;
  END IF;
  PERFORM ${s}.quota_receipt_apply(p_tenant, p_run, receipt_period, ${s}.quota_day_of(receipt_period, v_started_at_ms),
                                   p_tokens, p_minor_units, receipt_release_slot, p_concludes, v_agent);
  UPDATE ${s}.quota_passes p
     SET settled_at_ms = p_at_ms, receipt_tokens = p_tokens, receipt_minor_units = p_minor_units, receipt_concludes = p_concludes
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  v_next := CASE
    WHEN v_status = 'released' THEN 'released'
    WHEN p_concludes THEN 'concluded'
    WHEN v_status = 'withheld' THEN 'withheld'
    ELSE 'paused'
  END;
  UPDATE ${s}.quota_runs r SET status = v_next, status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.last_epoch = p_epoch AND r.status <> v_next;
  -- The slot this pass gives back goes to the tenant's waiters in this transaction (issue 12).
  IF receipt_release_slot AND ${waitersToServeSql(s, 'p_tenant')} THEN
    PERFORM ${s}.quota_grant_waiters(p_tenant, p_at_ms);
  END IF;
  outcome := 'settled';
END
$fn$;

-- A heartbeat (DESIGN.md decision 7): fence the pass (pass-rules fencePass decides in TypeScript
-- from the facts returned), answer withheld under a subject halt, else renew the lease to
-- max(current, atMs + leaseMs) and set a withheld run whose halt is gone running again.
CREATE FUNCTION ${s}.quota_heartbeat(
  p_tenant text, p_run text, p_epoch bigint, p_at_ms bigint, p_lease_ms bigint,
  OUT outcome text, OUT run_status text, OUT last_epoch bigint, OUT pass_found boolean,
  OUT pass_settled_at_ms bigint, OUT chain_json text, OUT halts json, OUT lease_expires_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_chain jsonb;
  v_check record;
BEGIN
  SELECT r.status, r.last_epoch, r.chain_json INTO run_status, last_epoch, v_chain
    FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'run-not-found';
    RETURN;
  END IF;
  chain_json := v_chain::text;
  SELECT true, p.settled_at_ms INTO pass_found, pass_settled_at_ms
    FROM ${s}.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  pass_found := coalesce(pass_found, false);
  IF NOT pass_found OR run_status IN ('concluded', 'released') OR p_epoch < last_epoch
     OR pass_settled_at_ms IS NOT NULL OR run_status = 'stranded' THEN
    outcome := 'fenced';
    RETURN;
  END IF;
  SELECT * INTO v_check FROM ${s}.quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  UPDATE ${s}.quota_passes p
     SET lease_expires_at_ms = greatest(p.lease_expires_at_ms, least(p_at_ms::numeric + p_lease_ms, ${MAX})::bigint)
   WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch
   RETURNING p.lease_expires_at_ms INTO lease_expires_at_ms;
  UPDATE ${s}.quota_runs r SET status = 'running', status_since_ms = p_at_ms
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'withheld';
  outcome := 'renewed';
END
$fn$;

-- A run's dispatch (DESIGN.md decisions 7, 9 and 11): the run must be open; with an epoch the pass
-- is fenced; a subject halt answers withheld and counts nothing; with an epoch the lease is
-- renewed (also when the rate answer is a refusal: the pass is alive); then the caller's ceilings
-- followed by the stored quota's for the grant go through quota_reserve_rate.
CREATE FUNCTION ${s}.quota_dispatch(
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
    FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
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
      FROM ${s}.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
    pass_found := coalesce(pass_found, false);
    IF NOT pass_found OR p_epoch < last_epoch OR pass_settled_at_ms IS NOT NULL OR run_status = 'stranded' THEN
      outcome := 'fenced';
      RETURN;
    END IF;
  END IF;
  SELECT * INTO v_check FROM ${s}.quota_withhold_check(p_tenant, p_run, v_chain, p_at_ms);
  IF v_check.verdict <> 'clear' THEN
    outcome := v_check.verdict;
    halts := v_check.halts;
    RETURN;
  END IF;
  IF p_epoch IS NOT NULL AND p_lease_ms IS NOT NULL THEN
    UPDATE ${s}.quota_passes p
       SET lease_expires_at_ms = greatest(p.lease_expires_at_ms, least(p_at_ms::numeric + p_lease_ms, ${MAX})::bigint)
     WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
    UPDATE ${s}.quota_runs r SET status = 'running', status_since_ms = p_at_ms
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'withheld';
  END IF;
  SELECT coalesce(array_agg((e.ceiling ->> 'count')::numeric::bigint ORDER BY e.position), '{}'),
         coalesce(array_agg((e.ceiling ->> 'windowSeconds')::numeric::bigint ORDER BY e.position), '{}')
    INTO configured_counts, configured_windows
    FROM ${s}.quota_tenants t,
         jsonb_array_elements(t.quota_json -> 'rateCeilings' -> p_grant) WITH ORDINALITY AS e(ceiling, position)
   WHERE t.tenant = p_tenant;
  SELECT * INTO v_judged FROM ${s}.quota_reserve_rate(
    p_tenant, p_grant, p_run, p_dispatch,
    p_counts || configured_counts, p_windows || configured_windows, p_at_ms, p_exempt);
  outcome := v_judged.outcome;
  ceiling_index := v_judged.ceiling_index;
  reached := v_judged.reached;
  retry_at_ms := v_judged.retry_at_ms;
END
$fn$;

-- The sweep of one run (DESIGN.md decision 8): re-checks under the run's lock that it is
-- registered and has no live pass (a heartbeat that won the race keeps its slot), then gives the
-- slot back and strands a running run since its latest pass's lease lapsed. The hold stays.
-- A waiter's grant nobody collected is not stranded: see quota_requeue_lapsed_grant.
CREATE FUNCTION ${s}.quota_sweep_run(p_tenant text, p_run text, p_at_ms bigint,
  OUT released_slot boolean, OUT stranded boolean)
LANGUAGE plpgsql AS $fn$
BEGIN
  released_slot := false;
  stranded := false;
  PERFORM 1 FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM ${s}.quota_passes p
              WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms > p_at_ms) THEN
    RETURN;
  END IF;
  -- A waiter's grant that lapsed uncollected: withdrawn whole, the waiter back in its place, and
  -- the room served again (that waiter first, if its own lease still runs).
  released_slot := EXISTS (SELECT 1 FROM ${s}.quota_running WHERE tenant = p_tenant AND run_id = p_run);
  IF ${s}.quota_requeue_lapsed_grant(p_tenant, p_run, p_at_ms, 0) THEN
    PERFORM ${s}.quota_grant_waiters(p_tenant, p_at_ms);
    RETURN;
  END IF;
  released_slot := ${s}.quota_slot_give(p_tenant, p_run);
  UPDATE ${s}.quota_runs r SET status = 'stranded',
         status_since_ms = coalesce((SELECT p.lease_expires_at_ms FROM ${s}.quota_passes p
                                      WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = r.last_epoch),
                                    r.status_since_ms)
   WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.status = 'running';
  stranded := FOUND;
  IF released_slot AND ${waitersToServeSql(s, 'p_tenant')} THEN
    PERFORM ${s}.quota_grant_waiters(p_tenant, p_at_ms);
  END IF;
END
$fn$;
`;
}

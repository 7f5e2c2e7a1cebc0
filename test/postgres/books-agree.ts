import pg from 'pg';

/*
 * A check of the PostgreSQL books for tests: every figure the store keeps beside an authoritative
 * set (docs/design/decisions.md "Group commit") is recomputed from that set, all in one REPEATABLE
 * READ snapshot, and each disagreement comes back as one line of text. No lines means the books
 * agree.
 *
 * What is recomputed:
 * - quota_figures.running: the members of quota_running per tenant;
 * - quota_agent_figures.running: the members per (tenant, agent_name);
 * - quota_spent.held_* and quota_agent_spent.held_*: the holds of quota_reserved counted as
 *   quota_held_move_counted counts them, in the hold's month and in its day when that day is known
 *   and lies in the hold's period (docs/design/decisions.md "Period figures are lossless");
 * - quota_rate_grants.last_ordinal/last_at_ms: no stored dispatch above the grant's last ordinal,
 *   none recorded after its last instant, the dispatch numbered last_ordinal (when a prune left it)
 *   recorded at last_at_ms, recorded instants never falling as ordinals grow, and a grant row for
 *   every grant with dispatches. A prune deletes the oldest rows of a grant (never its grant row),
 *   so these hold whatever was pruned;
 * - quota_spent.tokens/minor_units, per tenant and per agent: a month's settled total is at least the
 *   sum of its days'; the agents' totals of a period never exceed the tenant's; and, for a tenant
 *   nothing was pruned from, a month's total is the sum of the receipts of that month (the port's
 *   receipts in quota_settled and the passes' own), an agent's the sum over its runs' receipts;
 * - one receipt per pass: the pass's own (receipt_* of quota_passes) or the port's (quota_settled),
 *   never both, or the pass's spend is on the books twice;
 * - quota_runs.last_epoch: the latest epoch among the run's passes, when it has any.
 */

// Each hold of quota_reserved once for every period it counts in: its month, and its day when that
// day is known and lies in the hold's period (quota_held_move_counted's rule). Ends in its WHERE,
// so a caller may add a condition.
const HOLD_COUNTS_IN = `
      SELECT h.tenant, h.agent_name, k.period, h.tokens, h.minor_units
        FROM {s}.quota_reserved h
        CROSS JOIN LATERAL (VALUES (left(h.period, 7)),
          (CASE WHEN length(h.period) = 10 THEN h.period WHEN left(h.day, 7) = h.period THEN h.day END)) AS k(period)
       WHERE k.period IS NOT NULL`;

const ROWS = {
  figures: `
    WITH counted AS (SELECT tenant, count(*)::bigint AS n FROM {s}.quota_running GROUP BY tenant)
    SELECT coalesce(f.tenant, c.tenant) AS tenant, coalesce(f.running, 0)::text AS stored, coalesce(c.n, 0)::text AS counted
      FROM {s}.quota_figures f FULL JOIN counted c ON c.tenant = f.tenant
     WHERE coalesce(f.running, 0) <> coalesce(c.n, 0)`,
  agentFigures: `
    WITH counted AS (SELECT tenant, agent_name, count(*)::bigint AS n FROM {s}.quota_running
                      WHERE agent_name IS NOT NULL GROUP BY tenant, agent_name)
    SELECT coalesce(f.tenant, c.tenant) AS tenant, coalesce(f.agent_name, c.agent_name) AS agent,
           coalesce(f.running, 0)::text AS stored, coalesce(c.n, 0)::text AS counted
      FROM {s}.quota_agent_figures f FULL JOIN counted c ON c.tenant = f.tenant AND c.agent_name = f.agent_name
     WHERE coalesce(f.running, 0) <> coalesce(c.n, 0)`,
  held: `
    WITH counts_in AS (${HOLD_COUNTS_IN}),
    counted AS (SELECT tenant, period, sum(tokens) AS tokens, sum(minor_units) AS minor_units FROM counts_in GROUP BY tenant, period)
    SELECT coalesce(q.tenant, c.tenant) AS tenant, coalesce(q.period, c.period) AS period,
           coalesce(q.held_tokens, 0)::text AS stored_tokens, coalesce(c.tokens, 0)::text AS counted_tokens,
           coalesce(q.held_minor_units, 0)::text AS stored_minor_units, coalesce(c.minor_units, 0)::text AS counted_minor_units
      FROM {s}.quota_spent q FULL JOIN counted c ON c.tenant = q.tenant AND c.period = q.period
     WHERE coalesce(q.held_tokens, 0) <> coalesce(c.tokens, 0) OR coalesce(q.held_minor_units, 0) <> coalesce(c.minor_units, 0)`,
  agentHeld: `
    WITH counts_in AS (${HOLD_COUNTS_IN} AND h.agent_name IS NOT NULL),
    counted AS (SELECT tenant, agent_name, period, sum(tokens) AS tokens, sum(minor_units) AS minor_units
                  FROM counts_in GROUP BY tenant, agent_name, period)
    SELECT coalesce(q.tenant, c.tenant) AS tenant, coalesce(q.agent_name, c.agent_name) AS agent, coalesce(q.period, c.period) AS period,
           coalesce(q.held_tokens, 0)::text AS stored_tokens, coalesce(c.tokens, 0)::text AS counted_tokens,
           coalesce(q.held_minor_units, 0)::text AS stored_minor_units, coalesce(c.minor_units, 0)::text AS counted_minor_units
      FROM {s}.quota_agent_spent q
      FULL JOIN counted c ON c.tenant = q.tenant AND c.agent_name = q.agent_name AND c.period = q.period
     WHERE coalesce(q.held_tokens, 0) <> coalesce(c.tokens, 0) OR coalesce(q.held_minor_units, 0) <> coalesce(c.minor_units, 0)`,
  rateGrants: `
    WITH newest AS (
      SELECT DISTINCT ON (tenant, grant_ref) tenant, grant_ref, ordinal, reserved_at_ms,
             max(reserved_at_ms) OVER (PARTITION BY tenant, grant_ref) AS latest_at_ms
        FROM {s}.quota_rate ORDER BY tenant, grant_ref, ordinal DESC)
    SELECT n.tenant, n.grant_ref, n.ordinal::text AS newest_ordinal, n.reserved_at_ms::text AS newest_at_ms,
           n.latest_at_ms::text AS latest_at_ms, g.last_ordinal::text AS last_ordinal, g.last_at_ms::text AS last_at_ms
      FROM newest n LEFT JOIN {s}.quota_rate_grants g ON g.tenant = n.tenant AND g.grant_ref = n.grant_ref
     WHERE g.tenant IS NULL OR n.ordinal > g.last_ordinal OR n.latest_at_ms > g.last_at_ms
        OR (n.ordinal = g.last_ordinal AND n.reserved_at_ms <> g.last_at_ms)`,
  rateOrder: `
    SELECT tenant, grant_ref, ordinal::text AS ordinal, reserved_at_ms::text AS at_ms, previous_at_ms::text AS previous_at_ms
      FROM (SELECT tenant, grant_ref, ordinal, reserved_at_ms,
                   lag(reserved_at_ms) OVER (PARTITION BY tenant, grant_ref ORDER BY ordinal) AS previous_at_ms
              FROM {s}.quota_rate) r
     WHERE reserved_at_ms < previous_at_ms`,
  daysWithinMonth: `
    WITH days AS (SELECT tenant, left(period, 7) AS month, sum(tokens) AS tokens, sum(minor_units) AS minor_units
                    FROM {s}.quota_spent WHERE length(period) = 10 GROUP BY tenant, left(period, 7))
    SELECT d.tenant, d.month, coalesce(m.tokens, 0)::text AS month_tokens, d.tokens::text AS day_tokens,
           coalesce(m.minor_units, 0)::text AS month_minor_units, d.minor_units::text AS day_minor_units
      FROM days d LEFT JOIN {s}.quota_spent m ON m.tenant = d.tenant AND m.period = d.month
     WHERE d.tokens > coalesce(m.tokens, 0) OR d.minor_units > coalesce(m.minor_units, 0)`,
  agentDaysWithinMonth: `
    WITH days AS (SELECT tenant, agent_name, left(period, 7) AS month, sum(tokens) AS tokens, sum(minor_units) AS minor_units
                    FROM {s}.quota_agent_spent WHERE length(period) = 10 GROUP BY tenant, agent_name, left(period, 7))
    SELECT d.tenant, d.agent_name AS agent, d.month, coalesce(m.tokens, 0)::text AS month_tokens, d.tokens::text AS day_tokens,
           coalesce(m.minor_units, 0)::text AS month_minor_units, d.minor_units::text AS day_minor_units
      FROM days d LEFT JOIN {s}.quota_agent_spent m ON m.tenant = d.tenant AND m.agent_name = d.agent_name AND m.period = d.month
     WHERE d.tokens > coalesce(m.tokens, 0) OR d.minor_units > coalesce(m.minor_units, 0)`,
  agentsWithinTenant: `
    WITH agents AS (SELECT tenant, period, sum(tokens) AS tokens, sum(minor_units) AS minor_units,
                           sum(held_tokens) AS held_tokens, sum(held_minor_units) AS held_minor_units
                      FROM {s}.quota_agent_spent GROUP BY tenant, period)
    SELECT a.tenant, a.period, coalesce(q.tokens, 0)::text AS tenant_tokens, a.tokens::text AS agent_tokens,
           coalesce(q.minor_units, 0)::text AS tenant_minor_units, a.minor_units::text AS agent_minor_units
      FROM agents a LEFT JOIN {s}.quota_spent q ON q.tenant = a.tenant AND q.period = a.period
     WHERE a.tokens > coalesce(q.tokens, 0) OR a.minor_units > coalesce(q.minor_units, 0)`,
  settledFromReceipts: `
    WITH receipts AS (
      SELECT tenant, run_id, period, tokens, minor_units FROM {s}.quota_settled WHERE period IS NOT NULL
      UNION ALL
      SELECT tenant, run_id, period, receipt_tokens, receipt_minor_units FROM {s}.quota_passes WHERE receipt_tokens IS NOT NULL),
    unpruned AS (SELECT tenant FROM {s}.quota_spent EXCEPT SELECT tenant FROM {s}.quota_pruned),
    counted AS (SELECT r.tenant, left(r.period, 7) AS month, sum(r.tokens) AS tokens, sum(r.minor_units) AS minor_units
                  FROM receipts r GROUP BY r.tenant, left(r.period, 7)),
    months AS (SELECT tenant, period, tokens, minor_units FROM {s}.quota_spent WHERE length(period) = 7 AND tenant IN (SELECT tenant FROM unpruned))
    SELECT coalesce(m.tenant, c.tenant) AS tenant, coalesce(m.period, c.month) AS month,
           coalesce(m.tokens, 0)::text AS stored_tokens, coalesce(c.tokens, 0)::text AS counted_tokens,
           coalesce(m.minor_units, 0)::text AS stored_minor_units, coalesce(c.minor_units, 0)::text AS counted_minor_units
      FROM months m FULL JOIN (SELECT * FROM counted WHERE tenant NOT IN (SELECT tenant FROM {s}.quota_pruned)) c
        ON c.tenant = m.tenant AND c.month = m.period
     WHERE coalesce(m.tokens, 0) <> coalesce(c.tokens, 0) OR coalesce(m.minor_units, 0) <> coalesce(c.minor_units, 0)`,
  agentSettledFromReceipts: `
    WITH receipts AS (
      SELECT tenant, run_id, period, tokens, minor_units FROM {s}.quota_settled WHERE period IS NOT NULL
      UNION ALL
      SELECT tenant, run_id, period, receipt_tokens, receipt_minor_units FROM {s}.quota_passes WHERE receipt_tokens IS NOT NULL),
    counted AS (SELECT r.tenant, u.agent_name, left(r.period, 7) AS month, sum(r.tokens) AS tokens, sum(r.minor_units) AS minor_units
                  FROM receipts r JOIN {s}.quota_runs u ON u.tenant = r.tenant AND u.run_id = r.run_id
                 WHERE u.agent_name IS NOT NULL AND r.tenant NOT IN (SELECT tenant FROM {s}.quota_pruned)
                 GROUP BY r.tenant, u.agent_name, left(r.period, 7)),
    months AS (SELECT tenant, agent_name, period, tokens, minor_units FROM {s}.quota_agent_spent
                WHERE length(period) = 7 AND tenant NOT IN (SELECT tenant FROM {s}.quota_pruned))
    SELECT coalesce(m.tenant, c.tenant) AS tenant, coalesce(m.agent_name, c.agent_name) AS agent, coalesce(m.period, c.month) AS month,
           coalesce(m.tokens, 0)::text AS stored_tokens, coalesce(c.tokens, 0)::text AS counted_tokens,
           coalesce(m.minor_units, 0)::text AS stored_minor_units, coalesce(c.minor_units, 0)::text AS counted_minor_units
      FROM months m FULL JOIN counted c ON c.tenant = m.tenant AND c.agent_name = m.agent_name AND c.month = m.period
     WHERE coalesce(m.tokens, 0) <> coalesce(c.tokens, 0) OR coalesce(m.minor_units, 0) <> coalesce(c.minor_units, 0)`,
  oneReceiptPerPass: `
    SELECT p.tenant, p.run_id, p.epoch::text AS epoch, p.receipt_tokens::text AS own_tokens, x.tokens::text AS port_tokens
      FROM {s}.quota_passes p JOIN {s}.quota_settled x ON x.tenant = p.tenant AND x.run_id = p.run_id AND x.epoch = p.epoch
     WHERE p.receipt_tokens IS NOT NULL`,
  lastEpoch: `
    SELECT r.tenant, r.run_id, r.last_epoch::text AS last_epoch, p.latest::text AS latest
      FROM {s}.quota_runs r
      JOIN (SELECT tenant, run_id, max(epoch) AS latest FROM {s}.quota_passes GROUP BY tenant, run_id) p
        ON p.tenant = r.tenant AND p.run_id = r.run_id
     WHERE r.last_epoch <> p.latest`,
} as const;

/** Which figure a disagreement is about (the keys of the checks above). */
export type BooksFigure = keyof typeof ROWS;

/** One disagreement: the figure, and the row that shows it (keys and both sides, as text). */
export interface BooksDifference {
  readonly figure: BooksFigure;
  readonly row: Readonly<Record<string, string | null>>;
}

/**
 * Recomputes every derived figure of the schema `schema` from its authoritative rows in one
 * REPEATABLE READ snapshot and answers the disagreements, empty when the books agree. `target` is
 * a connection URL (a client is opened and closed for the call) or a connected client or pool.
 */
export async function booksDisagreements(
  target: string | pg.Client | pg.Pool,
  schema: string,
  options: { readonly inCallersTransaction?: boolean } = {},
): Promise<BooksDifference[]> {
  const s = `"${schema.replace(/"/g, '""')}"`;
  const owned = typeof target === 'string' ? new pg.Client({ connectionString: target }) : undefined;
  if (owned !== undefined) await owned.connect();
  const pooled = target instanceof pg.Pool ? await target.connect() : undefined;
  const client = owned ?? pooled ?? (target as pg.Client);
  const differences: BooksDifference[] = [];
  try {
    // With inCallersTransaction, the client is in a transaction the caller opened (a test that
    // plants a drift and rolls it back) and the checks read that transaction's view.
    if (options.inCallersTransaction !== true) await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      for (const [figure, text] of Object.entries(ROWS) as [BooksFigure, string][]) {
        const { rows } = await client.query<Record<string, string | null>>(text.replaceAll('{s}', s));
        for (const row of rows) differences.push({ figure, row });
      }
    } finally {
      if (options.inCallersTransaction !== true) await client.query('ROLLBACK');
    }
  } finally {
    pooled?.release();
    if (owned !== undefined) await owned.end();
  }
  return differences;
}

/** The disagreements as text, one a line (for assertion messages). */
export function describeDifferences(differences: readonly BooksDifference[]): string {
  return differences.map((d) => `${d.figure} ${JSON.stringify(d.row)}`).join('\n');
}

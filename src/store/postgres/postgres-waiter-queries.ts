/** The statements of the waiter verbs for the quoted schema `s`. */
export function waiterQueries(s: string) {
  return {
    queueFigures: `SELECT
        count(*) FILTER (WHERE state = 'waiting' AND lease_expires_at_ms > $2)::bigint AS depth,
        min(enqueued_at_ms) FILTER (WHERE state = 'waiting' AND lease_expires_at_ms > $2) AS oldest,
        count(*) FILTER (WHERE state = 'granted')::bigint AS uncollected
      FROM ${s}.quota_waiters WHERE tenant = $1`,
  } as const;
}

/** The waiter statements of one store. */
export type WaiterQueries = ReturnType<typeof waiterQueries>;

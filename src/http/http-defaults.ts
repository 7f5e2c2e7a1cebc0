// The service's defaults that the CLI prints in `serve --help` and its settings table. They live
// apart from the modules that use them so the CLI can show them without loading Fastify or
// prom-client (a command that does not serve never loads either).

/** Largest request body accepted by default: 64 KiB. Larger bodies answer 413. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * How much of a request body the server reads and throws away when it answers before the body has
 * all arrived (a 413 decided from the `content-length`, a 401), so a caller still sending reads the
 * answer: up to 16 MiB more, or 10 s, whichever comes first; then it answers and closes.
 */
export const DEFAULT_BODY_DRAIN: { readonly maxBytes: number; readonly maxMs: number } = Object.freeze({ maxBytes: 16 * 1024 * 1024, maxMs: 10_000 });

/** How many tenants get their own per-tenant series on `/metrics` by default. */
export const DEFAULT_METRICS_TENANTS = 50;

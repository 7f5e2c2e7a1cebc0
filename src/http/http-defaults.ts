// The service's defaults that the CLI prints in `serve --help` and its settings table. They live
// apart from the modules that use them so the CLI can show them without loading Fastify or
// prom-client (a command that does not serve never loads either).

/** Largest request body accepted by default: 64 KiB. Larger bodies answer 413. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** How many tenants get their own per-tenant series on `/metrics` by default. */
export const DEFAULT_METRICS_TENANTS = 50;

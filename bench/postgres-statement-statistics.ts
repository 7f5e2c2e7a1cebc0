import pg from 'pg';

import type { EmbeddedServer } from '../test/postgres/embedded-server.js';

/**
 * Loads pg_stat_statements into an embedded server (it has to be in `shared_preload_libraries`,
 * so this restarts the server) and counts nested statements too (`track = all`: those a PL/pgSQL
 * function runs), so the bench can say how many statements a decision takes. `extra` adds
 * settings for the profile (auto_explain); a comma in a value separates list elements. PostgreSQL's own settings file of that data directory
 * is the only thing changed.
 */
export async function loadStatementStatistics(server: EmbeddedServer, extra: Readonly<Record<string, string>> = {}): Promise<void> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const settings: Record<string, string> = {
      shared_preload_libraries: 'pg_stat_statements',
      'pg_stat_statements.track': 'all',
      ...extra,
    };
    for (const [name, value] of Object.entries(settings)) {
      // A list (shared_preload_libraries) is one literal per element.
      const literals = value.split(',').map((element) => client.escapeLiteral(element.trim()));
      await client.query(`ALTER SYSTEM SET ${name} = ${literals.join(', ')}`);
    }
  } finally {
    await client.end();
  }
  await server.stop();
  await server.start();
}

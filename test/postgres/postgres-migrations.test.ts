import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isQuotaError, QuotaError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open-store.js';
import { POSTGRES_SCHEMA_VERSION, postgresMigrations } from '../../src/store/postgres/postgres-migrations.js';
import { POSTGRES_MIGRATION_FILES } from '../../src/store/postgres/postgres-migrations.generated.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

// Opening a PostgreSQL store: numbered forward-only migrations in a configurable schema, a
// concurrent migrator that waits instead of failing, a newer schema refused.

// Every migration this build knows, as the schema table records them.
const RECORDED = POSTGRES_MIGRATION_FILES.map(({ version, name }) => ({ version, name }));

let url: string;
let admin: pg.Client;
const schemas: string[] = [];

function schemaFor(label: string): string {
  const schema = freshSchemaName(label);
  schemas.push(schema);
  return schema;
}

beforeAll(async () => {
  url = testPgUrl();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  for (const schema of schemas) await dropSchema(url, schema);
});

async function rejection(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof QuotaError)) throw new Error(`expected a QuotaError, got ${String(error)}`);
  return error;
}

describe('PostgreSQL migrations', () => {
  it('migrates a fresh schema from version 0 to the current version and records every migration', async () => {
    const schema = schemaFor('fresh');
    const store = await openPostgresStore(url, { schema });
    expect(store.migration).toEqual({
      backend: 'postgres',
      fromVersion: 0,
      toVersion: POSTGRES_SCHEMA_VERSION,
      applied: RECORDED,
    });
    await store.close();
    const rows = await admin.query(`SELECT version, name FROM "${schema}".quotaplane_schema ORDER BY version`);
    expect(rows.rows).toEqual(RECORDED);
  });

  it('reopening a current schema applies nothing and keeps its rows', async () => {
    const schema = schemaFor('reopen');
    const first = await openPostgresStore(url, { schema });
    await first.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: 1 });
    await first.close();
    const second = await openPostgresStore(url, { schema });
    expect(second.migration).toEqual({ backend: 'postgres', fromVersion: POSTGRES_SCHEMA_VERSION, toVersion: POSTGRES_SCHEMA_VERSION, applied: [] });
    expect(await second.tenant('acme').runningRuns(10)).toEqual(['r1']);
    await second.close();
  });

  it('applies only the migrations a schema lacks: a schema recorded at version 0 with the version table alone gets the whole schema', async () => {
    const schema = schemaFor('from-empty');
    const s = `"${schema}"`;
    await admin.query(`CREATE SCHEMA ${s}`);
    await admin.query(
      `CREATE TABLE ${s}.quotaplane_schema (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)`,
    );
    expect(postgresMigrations(s).map((step) => step.version)).toEqual(RECORDED.map(({ version }) => version));
    const store = await openPostgresStore(url, { schema });
    expect(store.migration).toEqual({
      backend: 'postgres',
      fromVersion: 0,
      toVersion: POSTGRES_SCHEMA_VERSION,
      applied: RECORDED,
    });
    const T = 1_760_000_000_000;
    const acme = store.tenant('acme');
    expect(await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T, leaseMs: 1_000 })).toMatchObject({ ok: true, epoch: 1 });
    await store.close();
  });

  it('eight stores opening one new schema at once: one migrates, the others wait on its lock and find it current', async () => {
    const schema = schemaFor('concurrent');
    const stores = await Promise.all(Array.from({ length: 8 }, () => openPostgresStore(url, { schema, poolSize: 1 })));
    const migrated = stores.filter((store) => store.migration.applied.length > 0);
    expect(migrated).toHaveLength(1);
    for (const store of stores) expect(store.migration.toVersion).toBe(POSTGRES_SCHEMA_VERSION);
    await Promise.all(stores.map((store) => store.close()));
    const count = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".quotaplane_schema`);
    expect(count.rows[0]).toEqual({ n: POSTGRES_SCHEMA_VERSION });
  });

  it('refuses a schema whose recorded version is newer than this build with SCHEMA_TOO_NEW naming both versions, and changes nothing', async () => {
    const schema = schemaFor('too-new');
    await (await openPostgresStore(url, { schema })).close();
    await admin.query(`INSERT INTO "${schema}".quotaplane_schema (version, name, applied_at_ms) VALUES (999, 'from_the_future', 1)`);
    const error = await rejection(openPostgresStore(url, { schema }));
    expect(error.code).toBe('SCHEMA_TOO_NEW');
    expect(error.message).toContain('version 999');
    expect(error.message).toContain(`up to ${POSTGRES_SCHEMA_VERSION}`);
    expect(error.details).toMatchObject({ backend: 'postgres', foundVersion: 999, supportedVersion: POSTGRES_SCHEMA_VERSION });
    const versions = await admin.query(`SELECT max(version)::int AS v, count(*)::int AS n FROM "${schema}".quotaplane_schema`);
    expect(versions.rows[0]).toEqual({ v: 999, n: POSTGRES_SCHEMA_VERSION + 1 });
  });

  it('refuses a store a build before release 0.1.0 made (version 1 without the books\' versions) as pre-release, naming what to do, and changes nothing', async () => {
    const schema = schemaFor('pre-release');
    await (await openPostgresStore(url, { schema })).close();
    // The layout of those builds: version 1 recorded, and no quota_book_versions.
    await admin.query(`DROP TABLE "${schema}".quota_book_versions CASCADE`);
    const error = await rejection(openPostgresStore(url, { schema }));
    expect(error.code).toBe('STORE_MISCONFIGURED');
    expect(error.details).toMatchObject({ reason: 'pre-release' });
    expect(error.message).toContain('before release 0.1.0');
    expect(error.message).toContain('create it afresh');
    const still = await admin.query(`SELECT to_regclass($1) IS NULL AS absent`, [`"${schema}".quota_book_versions`]);
    expect(still.rows[0]).toEqual({ absent: true });
  });

  it('keeps its tables in the configured schema and nowhere else', async () => {
    const schema = schemaFor('placement');
    const store = await openPostgresStore(url, { schema });
    await store.close();
    const tables = await admin.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    expect(tables.rows.map((row) => row.table_name)).toEqual([
      'quota_agent_figures',
      'quota_agent_spent',
      'quota_audit',
      'quota_book_versions',
      'quota_call_ceilings',
      'quota_call_meters',
      'quota_call_reservations',
      'quota_call_usage',
      'quota_events',
      'quota_figures',
      'quota_halted',
      'quota_passes',
      'quota_plane',
      'quota_plane_halt',
      'quota_pruned',
      'quota_rate',
      'quota_rate_grants',
      'quota_reserved',
      'quota_running',
      'quota_runs',
      'quota_settled',
      'quota_spent',
      'quota_tenants',
      'quota_wait_turns',
      'quota_waiters',
      'quotaplane_api_keys',
      'quotaplane_key_sessions',
      'quotaplane_schema',
      'quotaplane_webhook_deliveries',
      'quotaplane_webhook_endpoints',
    ]);
  });

  it('refuses a schema name that is not a plain lowercase identifier, naming the field', async () => {
    for (const schema of ['Quota', 'quota-plane', 'x"; DROP SCHEMA public; --', '', '1abc', 'a'.repeat(64)]) {
      const error = await rejection(openPostgresStore(url, { schema }));
      expect({ schema, code: error.code, field: error.details.field }).toEqual({ schema, code: 'INVALID_ARGUMENT', field: 'schema' });
    }
  });

  it('openStore routes postgres:// and postgresql:// URLs to the PostgreSQL adapter with the given schema', async () => {
    const schema = schemaFor('open-store');
    for (const form of [url, url.replace(/^postgres:\/\//, 'postgresql://')]) {
      const store = await openStore(form, { schema });
      expect(store.backend).toBe('postgres');
      await store.tenant('acme').reserve({ run: `r-${form.slice(0, 10)}`, quota: { period: 'monthly' }, atMs: 1 });
      await store.close();
    }
    const rows = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".quota_running`);
    expect(rows.rows[0]).toEqual({ n: 2 });
  });

  it('takes the schema from a ?schema= URL parameter, and refuses two different names for it', async () => {
    const schema = schemaFor('url-param');
    const store = await openStore(`${url}?schema=${schema}`);
    await store.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: 1 });
    await store.close();
    const rows = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".quota_running`);
    expect(rows.rows[0]).toEqual({ n: 1 });
    const error = await rejection(openPostgresStore(`${url}?schema=${schema}`, { schema: 'another_one' }));
    expect({ code: error.code, field: error.details.field }).toEqual({ code: 'INVALID_ARGUMENT', field: 'schema' });
  });

  it('answers STORE_UNAVAILABLE with the driver error as cause when no server listens at the URL', async () => {
    const unreachable = new URL(url);
    unreachable.port = '1';
    const error = await rejection(openPostgresStore(unreachable.toString(), { schema: schemaFor('unreachable'), busyTimeoutMs: 2_000 }));
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.cause).toBeDefined();
    expect(isQuotaError(error, 'STORE_UNAVAILABLE')).toBe(true);
  });

  it('a closed store refuses further calls with STORE_UNAVAILABLE', async () => {
    const store = await openPostgresStore(url, { schema: schemaFor('closed') });
    await store.close();
    await store.close();
    const error = await rejection(store.tenant('acme').running());
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.message).toContain('closed');
  });
});

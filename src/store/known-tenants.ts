import { EVERY_TENANT } from '../core/identifiers.js';
import { isKnownTenant, TENANT_RECORDS, type TenantRecord, type TenantRecords } from '../core/known-tenant.js';
import { TENANT_DELETE_ACTION } from '../core/tenant-deletion.js';
import type { QuotaStore } from './store.js';

/*
 * Where each kind of record that makes a tenant known (core/known-tenant.ts, rules.md#l95) is
 * kept: one or more tables per kind, under the same names on both backends. Both adapters build
 * their listing of tenants and their `hasTenant` from this one map, so what `status` lists and what
 * an operator's write accepts cannot drift apart, nor the two backends.
 */
interface RecordTable {
  readonly table: string;
  readonly where?: string;
}

const RECORD_TABLES: Readonly<Record<Exclude<TenantRecord, 'audit'>, readonly RecordTable[]>> = {
  quota: [{ table: 'quota_tenants' }],
  run: [{ table: 'quota_runs' }],
  slot: [{ table: 'quota_running' }],
  waiter: [{ table: 'quota_waiters' }],
  spend: [{ table: 'quota_spent' }],
  halt: [{ table: 'quota_halted' }],
  // A key of every tenant belongs to no tenant.
  key: [{ table: 'quotaplane_api_keys', where: `tenant <> '${EVERY_TENANT}'` }],
  // Every reserved model call has a meter of each of its subjects (its reservation never outlives
  // them), so the meters and the configured ceilings are the tenant's model-call records.
  call: [{ table: 'quota_call_meters' }, { table: 'quota_call_ceilings' }],
};

// An audit chain makes its tenant known unless its newest row is the tenant's deletion
// (rules.md#l95-6): a deleted tenant keeps its chain but no longer exists until it is used again.
const DELETED = `'${TENANT_DELETE_ACTION}'`;

// The tenants whose chain makes them known: each chain's head (its highest seq, read from the
// primary key's order) is not a deletion.
function auditListSql(prefix: string): string {
  return (
    `SELECT h.tenant FROM (SELECT tenant, max(seq) AS seq FROM ${prefix}quota_audit GROUP BY tenant) h ` +
    `WHERE NOT EXISTS (SELECT 1 FROM ${prefix}quota_audit d WHERE d.tenant = h.tenant AND d.seq = h.seq AND d.action = ${DELETED})`
  );
}

// Whether `tenant`'s chain makes it known: its head row exists and is not a deletion.
function auditExistsSql(prefix: string, tenant: string): string {
  return `EXISTS (SELECT 1 FROM (SELECT action FROM ${prefix}quota_audit WHERE tenant = ${tenant} ORDER BY seq DESC LIMIT 1) h WHERE h.action <> ${DELETED})`;
}

/**
 * Every tenant with an audit chain once, in byte order, a deleted one included (store.ts
 * `auditChains`), with the schema `prefix` of a backend.
 */
export function auditChainsSql(prefix: string): string {
  return `SELECT DISTINCT tenant FROM ${prefix}quota_audit ORDER BY tenant`;
}

/**
 * Every known tenant once, in byte order, with the schema `prefix` of a backend (`` on SQLite,
 * `"s".` on PostgreSQL, whose tenant columns are `COLLATE "C"`): the union of the tenant columns
 * of every table of {@link RECORD_TABLES}, and of the audit chains not ended by a deletion.
 */
export function listTenantsSql(prefix: string): string {
  const selects = TENANT_RECORDS.flatMap((record) => {
    if (record === 'audit') return [auditListSql(prefix)];
    return RECORD_TABLES[record].map(({ table, where }) => `SELECT tenant FROM ${prefix}${table}${where === undefined ? '' : ` WHERE ${where}`}`);
  });
  return `${selects.join('\n  UNION ')}\n  ORDER BY tenant`;
}

/**
 * One row with a column per kind of record (named as the kind), true (or 1) when the store holds at
 * least one of the tenant's: an indexed `EXISTS` per table of the kind (or-ed when it has several)
 * on the tenant given by the `tenant` placeholder (`@tenant` on SQLite, `$1` on PostgreSQL); for
 * `audit`, a chain whose newest row is not the tenant's deletion.
 */
export function tenantRecordsSql(prefix: string, tenant: string): string {
  const columns = TENANT_RECORDS.map((record) => {
    if (record === 'audit') return `${auditExistsSql(prefix, tenant)} AS "audit"`;
    const exists = RECORD_TABLES[record].map(({ table, where }) => `EXISTS (SELECT 1 FROM ${prefix}${table} WHERE tenant = ${tenant}${where === undefined ? '' : ` AND ${where}`})`);
    return `${exists.length === 1 ? exists[0] : `(${exists.join(' OR ')})`} AS "${record}"`;
  });
  return `SELECT ${columns.join(',\n  ')}`;
}

/** Decodes the row of {@link tenantRecordsSql} (booleans on PostgreSQL, 0 or 1 on SQLite) and applies the rule: whether the tenant is known. */
export function knownTenantOf(row: Readonly<Record<string, unknown>> | undefined): boolean {
  const records = Object.fromEntries(TENANT_RECORDS.map((record) => [record, row?.[record] === true || row?.[record] === 1])) as TenantRecords;
  return isKnownTenant(records);
}

/**
 * Whether `store` knows `tenant` (rules.md#l95): its `hasTenant`, or, for a store without that
 * optional capability, whether its listing of tenants holds it.
 */
export async function storeHasTenant(store: QuotaStore, tenant: string): Promise<boolean> {
  return store.hasTenant === undefined ? (await store.tenants()).includes(tenant) : store.hasTenant(tenant);
}

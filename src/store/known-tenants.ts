import { EVERY_TENANT } from '../core/identifiers.js';
import { isKnownTenant, TENANT_RECORDS, type TenantRecord, type TenantRecords } from '../core/known-tenant.js';
import type { QuotaStore } from './store.js';

/*
 * Where each kind of record that makes a tenant known (core/known-tenant.ts, rules.md#l95) is
 * kept: one table per kind, under the same name on both backends. Both adapters build their
 * listing of tenants and their `hasTenant` from this one map, so what `status` lists and what an
 * operator's write accepts cannot drift apart, nor the two backends.
 */
const RECORD_TABLES: Readonly<Record<TenantRecord, { readonly table: string; readonly where?: string }>> = {
  quota: { table: 'quota_tenants' },
  run: { table: 'quota_runs' },
  slot: { table: 'quota_running' },
  waiter: { table: 'quota_waiters' },
  spend: { table: 'quota_spent' },
  halt: { table: 'quota_halted' },
  audit: { table: 'quota_audit' },
  // A key of every tenant belongs to no tenant.
  key: { table: 'quotaplane_api_keys', where: `tenant <> '${EVERY_TENANT}'` },
};

/**
 * Every known tenant once, in byte order, with the schema `prefix` of a backend (`` on SQLite,
 * `"s".` on PostgreSQL, whose tenant columns are `COLLATE "C"`): the union of the tenant columns
 * of every table of {@link RECORD_TABLES}.
 */
export function listTenantsSql(prefix: string): string {
  const selects = TENANT_RECORDS.map((record) => {
    const { table, where } = RECORD_TABLES[record];
    return `SELECT tenant FROM ${prefix}${table}${where === undefined ? '' : ` WHERE ${where}`}`;
  });
  return `${selects.join('\n  UNION ')}\n  ORDER BY tenant`;
}

/**
 * One row with a column per kind of record (named as the kind), true (or 1) when the store holds at
 * least one of the tenant's: each an indexed `EXISTS` on the tenant given by the `tenant`
 * placeholder (`@tenant` on SQLite, `$1` on PostgreSQL).
 */
export function tenantRecordsSql(prefix: string, tenant: string): string {
  const columns = TENANT_RECORDS.map((record) => {
    const { table, where } = RECORD_TABLES[record];
    return `EXISTS (SELECT 1 FROM ${prefix}${table} WHERE tenant = ${tenant}${where === undefined ? '' : ` AND ${where}`}) AS "${record}"`;
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

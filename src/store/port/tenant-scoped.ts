/**
 * What every capability of a tenant handle shares: the one tenant it is confined to. No method of
 * a handle reads or writes another tenant's rows (docs/design/rules.md#l34–#l37).
 */
export interface TenantScoped {
  /** The tenant every operation is confined to. */
  readonly tenant: string;
}

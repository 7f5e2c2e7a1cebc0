import type { ApiKeyStore } from '../api-keys.js';

/**
 * The API keys of the HTTP service, a capability of the whole store (not of a tenant handle). The
 * key store (`ApiKeyStore`, store/api-keys.ts) checks its own arguments; the plane appends each
 * key's audit row to the reserved chain (plane/api-key-admin.ts). An API key is a record of its
 * tenant (docs/design/rules.md#l95).
 */
export interface ApiKeysCapability {
  /**
   * The API keys of the HTTP service. Optional so a third-party store keeps compiling; both
   * built-in adapters have it, and `quotaplane serve` and `keys` refuse a store without it.
   */
  apiKeys?(): ApiKeyStore;
}

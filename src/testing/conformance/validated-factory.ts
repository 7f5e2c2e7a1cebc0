import { validated } from '../../store/validated-store.js';
import type { StoreFactory } from './types.js';

/**
 * `factory` whose stores are wrapped in `validated()` (store/validated-store.ts) before any case
 * sees them: the battery proves the port as its users get it, with the one set of input rules in
 * front of the adapter, so the cases that pass bad input expect the wrapper's `INVALID_ARGUMENT`
 * and an adapter never repeats the checks itself. A store the factory already wrapped (as
 * `openStore` answers it) is used as it is.
 */
export function validatedFactory(factory: StoreFactory): StoreFactory {
  return async () => {
    const opened = await factory();
    return { store: validated(opened.store), close: () => opened.close() };
  };
}

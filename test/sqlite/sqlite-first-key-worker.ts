// A racer for the "first key" race in sqlite-api-keys.test.ts: forked as its own OS process, it
// opens the shared file, says "ready", waits for "go", asks createFirst to store its own key, and
// reports whether it did.
import { mintApiKey } from '../../src/http/api-key-secret.js';
import { openStore } from '../../src/store/open-store.js';

const url = process.argv[2] ?? '';
const send = (message: unknown) => new Promise<void>((resolve) => process.send?.(message, () => resolve()));

const store = await openStore(url);
const keys = store.apiKeys?.();
if (keys === undefined) throw new Error('the SQLite store has no apiKeys()');
process.on('message', (message) => {
  if (message !== 'go') return;
  void (async () => {
    try {
      const { key } = mintApiKey({ role: 'operator', tenant: '*', name: `racer-${process.pid}`, atMs: Date.now() });
      const created = await keys.createFirst(key);
      await send({ created });
    } catch (error) {
      await send({ error: error instanceof Error ? error.message : String(error) });
    } finally {
      await store.close();
      process.exit(0);
    }
  })();
});
await send('ready');

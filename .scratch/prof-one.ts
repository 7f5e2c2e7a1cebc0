import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open-store.js';
const mode = process.argv[2]!;
const store = await openStore(`sqlite:${join(mkdtempSync(join(tmpdir(), 'ap-')), 'a.db')}`);
const T0 = Date.UTC(2027, 0, 1);
const h = store.tenant('t');
await h.setQuota({ period: 'daily', maxTokensPerPeriod: 100 }, { atMs: T0, by: { actor: 'b', basis: 'asserted' }, action: 'quota.set', subject: 'quota', detail: {} });
const tokens = mode === 'cross' ? 90 : 50;
for (let day = 1; day <= 8000; day++) {
  const atMs = T0 + day * 86_400_000; const run = `r${day}`;
  await h.admit({ run, budget: { maxTokens: 90, maxCallTokens: 0 }, width: 0, atMs, leaseMs: 60000 });
  await h.settlePass({ run, epoch: 1, spend: { tokens, minorUnits: 0 }, concludes: true, atMs: atMs + 1 });
}
await store.close();

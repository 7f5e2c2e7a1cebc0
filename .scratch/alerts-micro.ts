import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore } from '../src/store/open-store.js';
import { readFileSync } from 'node:fs';
const wchar = () => Number(readFileSync(`/proc/self/task/${process.pid}/io`, 'utf8').split('\n').find((l) => l.startsWith('wchar:'))!.slice(6));
const bytes = { cross: 0, quiet: 0 };

const url = process.argv[2] ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'am-')), 'a.db')}`;
const store = await openStore(url, url.startsWith('postgres') ? { schema: `am_${Date.now()}` } : {});
const T0 = Date.UTC(2027, 0, 1);
const audit = { atMs: T0, by: { actor: 'b', basis: 'asserted' as const }, action: 'quota.set', subject: 'quota', detail: {} };
const a = store.tenant('cross'), b = store.tenant('quiet');
for (const h of [a, b]) await h.setQuota({ period: 'daily', maxTokensPerPeriod: 100 }, audit);
let day = 0;
async function one(h: typeof a, tokens: number): Promise<number> {
  day += 1; const atMs = T0 + day * 86_400_000; const run = `r${day}`;
  await h.admit({ run, budget: { maxTokens: 90, maxCallTokens: 0 }, width: 0, atMs, leaseMs: 60000 });
  const w = wchar();
  const t = performance.now();
  await h.settlePass({ run, epoch: 1, spend: { tokens, minorUnits: 0 }, concludes: true, atMs: atMs + 1 });
  const d = performance.now() - t;
  bytes[tokens === 90 ? 'cross' : 'quiet'] += wchar() - w;
  return d;
}
const n = Number(process.argv[3] ?? 4000);
const xs: number[] = [], ys: number[] = [];
for (let i = 0; i < 300; i++) { await one(a, 90); await one(b, 50); }
for (let i = 0; i < n; i++) { xs.push(await one(a, 90)); ys.push(await one(b, 50)); }
const med = (v: number[]) => [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)]!;
const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
console.log(`crossing p50 ${(med(xs)*1000).toFixed(0)}µs mean ${(mean(xs)*1000).toFixed(0)}µs | quiet p50 ${(med(ys)*1000).toFixed(0)}µs mean ${(mean(ys)*1000).toFixed(0)}µs | ratio p50 ${(med(xs)/med(ys)).toFixed(3)} mean ${(mean(xs)/mean(ys)).toFixed(3)}`);
console.log(`bytes per settle: crossing ${(bytes.cross/(n+300)).toFixed(0)} quiet ${(bytes.quiet/(n+300)).toFixed(0)}`);
await store.close();

import { readFileSync, readdirSync } from 'node:fs';
for (const dir of ['/tmp/prof/cross', '/tmp/prof/quiet']) {
  const file = readdirSync(dir)[0];
  const p = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8'));
  const self = new Map(); const dt = p.timeDeltas; const byId = new Map(p.nodes.map((n) => [n.id, n]));
  p.samples.forEach((id, i) => { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)[0]}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(dir, 'total ms', (total / 1000).toFixed(0));
  console.log([...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `  ${(v / 1000).toFixed(0)}ms ${k}`).join('\n'));
}

// Compares two heap snapshots of the memory run (`run.ts --snapshots <dir>`): counts and self
// sizes per kind of object (constructor name; strings, code and the like by their type), and
// prints what grew most from the first to the second. A leak shows as a kind whose count grows
// with the work done (one more per run, per request, per tenant); compare start → mid-load →
// after. Self size only: what an object holds through its members is counted under their kinds.
//
//   npx tsx scripts/serve-memory/snapshot-diff.ts /tmp/snaps/start.heapsnapshot /tmp/snaps/after.heapsnapshot [--top 20]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface HeapSnapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: readonly string[]; readonly node_types: readonly [readonly string[], ...unknown[]] } };
  readonly nodes: readonly number[];
  readonly strings: readonly string[];
}

/** Count and self size (bytes) of one kind of heap object. */
interface Kind {
  count: number;
  bytes: number;
}

// Types whose node names are contents (a string's text, a number's value), not kinds: grouped by type alone.
const GROUPED_BY_TYPE = new Set(['string', 'concatenated string', 'sliced string', 'number', 'bigint', 'code', 'hidden', 'array']);

/** Kinds of objects in the snapshot at `path`, keyed `type: name`. */
function kindsOf(path: string): Map<string, Kind> {
  const heap = JSON.parse(readFileSync(path, 'utf8')) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const kinds = new Map<string, Kind>();
  for (let index = 0; index < heap.nodes.length; index += width) {
    const type = types[heap.nodes[index + typeAt] as number] ?? 'unknown';
    const key = GROUPED_BY_TYPE.has(type) ? type : `${type}: ${heap.strings[heap.nodes[index + nameAt] as number] ?? ''}`;
    const kind = kinds.get(key) ?? { count: 0, bytes: 0 };
    kind.count += 1;
    kind.bytes += heap.nodes[index + sizeAt] as number;
    kinds.set(key, kind);
  }
  return kinds;
}

function main(): void {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '20' } }, allowPositionals: true });
  const [firstPath, secondPath] = positionals;
  if (firstPath === undefined || secondPath === undefined) throw new Error('usage: snapshot-diff.ts <first.heapsnapshot> <second.heapsnapshot> [--top N]');
  const first = kindsOf(firstPath);
  const second = kindsOf(secondPath);
  const total = (kinds: Map<string, Kind>) => [...kinds.values()].reduce((sum, kind) => sum + kind.bytes, 0);
  const rows = [...new Set([...first.keys(), ...second.keys()])].map((key) => {
    const a = first.get(key) ?? { count: 0, bytes: 0 };
    const b = second.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: b.count - a.count, bytes: b.bytes - a.bytes, after: b };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  console.log(`self size of every object: ${kb(total(first))} → ${kb(total(second))} (${total(second) >= total(first) ? '+' : ''}${kb(total(second) - total(first))})`);
  console.log(`${'kind'.padEnd(60)}${'Δ count'.padStart(10)}${'Δ size'.padStart(12)}${'count after'.padStart(13)}`);
  for (const row of rows.slice(0, Number(values.top))) {
    console.log(`${row.key.slice(0, 59).padEnd(60)}${String(row.count).padStart(10)}${kb(row.bytes).padStart(12)}${String(row.after.count).padStart(13)}`);
  }
}

main();

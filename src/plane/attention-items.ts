import type { AttentionCondition, AttentionItem, Remedy } from './operator-types.js';

/*
 * The per-run view of an attention report: a run a crash left stranded is also a run with an
 * unsettled pass, and a person acts on the run, not on each condition. So the conditions of one
 * run are gathered into one item with every reason, and their remedies merged into the commands
 * that end them all. `spend.overrun` is about a tenant's period, not a run, and stands alone.
 */

// The key an item gathers its conditions under.
function itemKey(condition: AttentionCondition): string {
  return condition.kind === 'spend.overrun' ? `${condition.tenant}\u0000period` : `${condition.tenant}\u0000run\u0000${condition.run}`;
}

// Lines in first-seen order, each once.
function union(lines: readonly (readonly string[])[]): string[] {
  return [...new Set(lines.flat())];
}

/**
 * One remedy that ends every condition of an item: the first condition's sentence, then the
 * sentence of each later one that asks for a command the earlier ones do not already give (a
 * stranded run's remedy already settles its last pass, so that pass's own remedy adds nothing);
 * the CLI and HTTP lines of all of them, each once.
 */
export function mergedRemedy(remedies: readonly Remedy[]): Remedy {
  const texts: string[] = [];
  const seen = new Set<string>();
  for (const remedy of remedies) {
    const adds = remedy.cli.some((line) => !seen.has(line)) || remedy.cli.length === 0;
    if (adds && !texts.includes(remedy.text)) texts.push(remedy.text);
    for (const line of remedy.cli) seen.add(line);
  }
  return {
    text: texts.join('; then '),
    cli: union(remedies.map((remedy) => remedy.cli)),
    http: union(remedies.map((remedy) => remedy.http)),
  };
}

/**
 * Gathers `conditions` (in report order) into one {@link AttentionItem} per run (and one per
 * tenant for `spend.overrun`), in the order each item's first condition appears: its reasons in
 * report order, each once; the passes named, ascending; the earliest `sinceMs` and so the largest
 * `ageMs`; every summary; and one merged remedy.
 */
export function attentionItems(conditions: readonly AttentionCondition[]): AttentionItem[] {
  const groups = new Map<string, AttentionCondition[]>();
  for (const condition of conditions) {
    const key = itemKey(condition);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [condition]);
    else group.push(condition);
  }
  return [...groups.values()].map((group) => {
    const first = group[0] as AttentionCondition;
    const epochs = [...new Set(group.flatMap((condition) => (condition.epoch === null ? [] : [condition.epoch])))].sort((a, b) => a - b);
    const earliest = group.reduce((found, condition) => (condition.sinceMs < found.sinceMs ? condition : found), first);
    return {
      tenant: first.tenant,
      run: first.run,
      reasons: [...new Set(group.map((condition) => condition.kind))],
      epochs,
      halt: group.find((condition) => condition.halt !== null)?.halt ?? null,
      sinceMs: earliest.sinceMs,
      ageMs: Math.max(...group.map((condition) => condition.ageMs)),
      summaries: group.map((condition) => condition.summary),
      remedy: mergedRemedy(group.map((condition) => condition.remedy)),
    };
  });
}

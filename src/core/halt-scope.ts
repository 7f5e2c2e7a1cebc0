import type { Operator } from './operator.js';

/**
 * What an operator's emergency stop covers (docs/design/rules.md#d9, #d10), ordered from broadest
 * to narrowest: every tenant of the plane (the plane-wide halt, thrown with `Plane.haltPlane`,
 * never a tenant's own row; docs/design/rules.md#c49) < the whole tenant < one agent (by name,
 * every revision) < one revision (SHA-256 digest of the reviewed manifest, 64 lowercase hex) <
 * everything acting for one principal (a subject).
 */
export type HaltScope =
  | { readonly kind: 'plane' }
  | { readonly kind: 'tenant' }
  | { readonly kind: 'agent'; readonly name: string }
  | { readonly kind: 'revision'; readonly digest: string }
  | { readonly kind: 'subject'; readonly principal: string };

/**
 * A standing halt: its scope, the operator's reason, who threw it, and when (`atMs`, Unix ms,
 * supplied by the caller and never read from a clock inside the store; docs/design/rules.md#c27).
 */
export interface Halt {
  readonly scope: HaltScope;
  readonly reason: string;
  readonly by: Operator;
  readonly atMs: number;
  /**
   * `true` when a tenant, agent or revision halt was thrown to reach running work too: the running
   * runs it covers answer `Withheld` at their next heartbeat, dispatch or resume, as under a subject
   * halt (docs/design/rules.md#c44). Absent or `false`: it stops new admissions only. A subject halt
   * always reaches running work, whatever this says (docs/design/rules.md#l47).
   */
  readonly reachesRunning?: boolean | undefined;
}

/**
 * Whether `halt` reaches running work (docs/design/rules.md#l46, #l47, #c44): a subject halt always
 * does; any other only when it was thrown with `reachesRunning: true`.
 */
export function haltReachesRunning(halt: Halt): boolean {
  return halt.scope.kind === 'subject' || halt.reachesRunning === true;
}

/** The agent identity a run is governed by: its name and the digest of its revision. */
export interface AgentIdentity {
  readonly name: string;
  readonly digest: string;
}

/** What a halt is matched against: the run's agent identity and delegation chain, either may be absent. */
export interface HaltTarget {
  readonly agent?: AgentIdentity | undefined;
  readonly chain?: readonly string[] | undefined;
}

/**
 * The four scope forms, in order, as the CLI help, CLI refusals and API schema text show them
 * (docs/design/rules.md#d12).
 */
export const HALT_SCOPE_FORMS: readonly string[] = Object.freeze([
  'tenant',
  'agent:<metadata.name>',
  'revision:<manifest digest>',
  'subject:<principal on the chain>',
]);

/** The forms, each in single quotes, joined with `, ` (docs/design/rules.md#d12). */
export function haltScopeForms(): string {
  return HALT_SCOPE_FORMS.map((form) => `'${form}'`).join(', ');
}

/** The key of the plane-wide halt's scope (docs/design/rules.md#c49); no tenant's halt has it. */
export const PLANE_HALT_KEY = 'plane';

/** The durable key and CLI/HTTP spelling of a scope: `tenant`, `agent:<name>`, `revision:<hex>`, `subject:<id>`. */
export function haltScopeKey(scope: HaltScope): string {
  switch (scope.kind) {
    case 'plane':
      return PLANE_HALT_KEY;
    case 'tenant':
      return 'tenant';
    case 'agent':
      return `agent:${scope.name}`;
    case 'revision':
      return `revision:${scope.digest}`;
    case 'subject':
      return `subject:${scope.principal}`;
  }
}

/**
 * The shape of an agent manifest digest (a SHA-256): exactly 64 hex digits of either case, kept
 * lowercase once accepted. One pattern for agent identities, `revision:` halt scopes and the HTTP
 * schemas.
 */
export const DIGEST_PATTERN = '^[0-9a-fA-F]{64}$';

const HEX_64 = new RegExp(DIGEST_PATTERN);

/**
 * Parses a scope key (docs/design/rules.md#d9), or returns `null`. Case-sensitive and untrimmed:
 * exactly `tenant`; `agent:` or `subject:` with a non-empty rest (which may contain `:`);
 * `revision:` with exactly 64 hex digits of either case, normalised to lowercase.
 */
export function parseHaltScope(text: string): HaltScope | null {
  if (text === 'tenant') return { kind: 'tenant' };
  if (text.startsWith('agent:') && text.length > 'agent:'.length) {
    return { kind: 'agent', name: text.slice('agent:'.length) };
  }
  if (text.startsWith('subject:') && text.length > 'subject:'.length) {
    return { kind: 'subject', principal: text.slice('subject:'.length) };
  }
  if (text.startsWith('revision:')) {
    const hex = text.slice('revision:'.length);
    return HEX_64.test(hex) ? { kind: 'revision', digest: hex.toLowerCase() } : null;
  }
  return null;
}

/**
 * Parses any scope key a refusal or listing may name: the plane-wide halt's `plane` as well as the
 * four forms of a tenant's halts ({@link parseHaltScope}), or `null`.
 */
export function parseAnyHaltScope(text: string): HaltScope | null {
  return text === PLANE_HALT_KEY ? { kind: 'plane' } : parseHaltScope(text);
}

/** How a `Halted` message names the scope: `the whole tenant`, `agent 'triage'` and so on. */
export function describeHaltScope(scope: HaltScope): string {
  switch (scope.kind) {
    case 'plane':
      return 'every tenant of the plane';
    case 'tenant':
      return 'the whole tenant';
    case 'agent':
      return `agent '${scope.name}'`;
    case 'revision':
      return `manifest revision ${scope.digest}`;
    case 'subject':
      return `everything acting for '${scope.principal}'`;
  }
}

/**
 * Whether `scope` covers a run (docs/design/rules.md#d10): tenant covers everything; agent matches
 * the agent's name; revision matches its digest; subject matches any principal on the chain.
 * A run without an agent is covered by neither agent nor revision; one without a chain never by subject.
 */
export function haltCovers(scope: HaltScope, target: HaltTarget): boolean {
  switch (scope.kind) {
    case 'plane':
    case 'tenant':
      return true;
    case 'agent':
      return target.agent?.name === scope.name;
    case 'revision':
      return target.agent?.digest === scope.digest;
    case 'subject':
      return target.chain?.includes(scope.principal) ?? false;
  }
}

/**
 * The withdrawn principal when `scope` is a subject halt on a principal of `chain`, else `null`
 * (docs/design/rules.md#l47).
 */
export function withdrawsFrom(scope: HaltScope, chain: readonly string[] | undefined): string | null {
  return scope.kind === 'subject' && (chain?.includes(scope.principal) ?? false) ? scope.principal : null;
}

const RANK: Record<HaltScope['kind'], number> = { plane: -1, tenant: 0, agent: 1, revision: 2, subject: 3 };

/**
 * Total order on scopes (docs/design/rules.md#l3, #c49): plane < tenant < agent < revision < subject, then by the
 * field's UTF-16 code units. Negative when `a` is broader than `b`.
 */
export function compareHaltScopes(a: HaltScope, b: HaltScope): number {
  const byKind = RANK[a.kind] - RANK[b.kind];
  if (byKind !== 0) return byKind;
  const ka = haltScopeKey(a);
  const kb = haltScopeKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * The halt a refusal reports when several cover one run: the narrowest, i.e. the greatest scope
 * in {@link compareHaltScopes} order, so a subject halt wins (docs/design/rules.md#d11). `null`
 * when none covers the target.
 */
export function coveringHalt(halts: readonly Halt[], target: HaltTarget): Halt | null {
  let reported: Halt | null = null;
  for (const halt of halts) {
    if (!haltCovers(halt.scope, target)) continue;
    if (reported === null || compareHaltScopes(halt.scope, reported.scope) > 0) reported = halt;
  }
  return reported;
}

import { describe } from './amounts.js';
import { invalidArgument } from './errors.js';

/**
 * Longest identifier accepted, in UTF-16 code units (JavaScript string length); see
 * docs/design/decisions.md "Identifiers". Every HTTP route accepts an identifier of this length in
 * its path: the service's router takes path parameters up to {@link MAX_PATH_PARAMETER_LENGTH}
 * characters.
 */
export const MAX_IDENTIFIER_LENGTH = 200;

/**
 * Longest path parameter the HTTP router passes on, in characters: more than any identifier with
 * any scope prefix (`revision:`), even percent-encoded (one UTF-16 unit encodes to at most 9
 * characters, `%E4%B8%AD`), so an id that admission accepted is never refused by the router, and
 * one that is too long is refused by quotaplane's own rule, naming the field.
 */
export const MAX_PATH_PARAMETER_LENGTH = 2048;

// Control (Cc), format (Cf: bidi overrides, zero-width characters, the BOM), line and paragraph
// separators (Zl, Zp): characters that print as nothing, reorder what follows, or break a line,
// so a name holding one can look like another name in a table, a log line or a metric label.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Why `value` is not an identifier, as the rest of a sentence that begins with the field's name
 * (`must hold no control or format character, but holds U+202E at position 4 (identifiers are …)`),
 * or `null` when it is one. The library, the CLI and HTTP's schema validation all answer with this
 * text (docs/concepts/glossary.md#names).
 */
export function identifierProblem(value: unknown): string | null {
  const problem = firstProblem(value);
  return problem === null ? null : `${problem} (${IDENTIFIER_RULE})`;
}

const IDENTIFIER_RULE = `identifiers are 1–${MAX_IDENTIFIER_LENGTH} characters of well-formed Unicode, with no control or format character and no surrounding space, and not . or ..`;

function firstProblem(value: unknown): string | null {
  if (typeof value !== 'string') return `must be a string, got ${describe(value)}`;
  if (value.length === 0 || value.length > MAX_IDENTIFIER_LENGTH) {
    return `must be 1–${MAX_IDENTIFIER_LENGTH} characters, got ${value.length}`;
  }
  const index = firstLoneSurrogate(value);
  if (index >= 0) {
    return `must be well-formed Unicode, but holds a lone surrogate ${codePoint(value.charCodeAt(index))} at position ${index + 1}, got ${shown(value)}`;
  }
  const hidden = HIDDEN.exec(value);
  if (hidden !== null) {
    const position = [...value.slice(0, hidden.index)].length + 1;
    return `must hold no control or format character, but holds ${codePoint(hidden[0].codePointAt(0) ?? 0)} at position ${position}, got ${shown(value)}`;
  }
  if (value.trim().length === 0) return `must not be blank, got ${JSON.stringify(value)}`;
  if (value.trim() !== value) return `must not begin or end with a space, got ${JSON.stringify(value)}`;
  // A URL resolves a path segment . or .. away (even percent-encoded), so no HTTP route could name it.
  if (value === '.' || value === '..') return `must not be ${JSON.stringify(value)}, which no URL path can carry`;
  return null;
}

/**
 * True for a well-formed identifier (docs/concepts/glossary.md#names): 1–200 UTF-16 units of
 * well-formed Unicode (no lone surrogate), no control, format, line or paragraph separator
 * character (so no bidi override and no zero-width character), no leading or trailing white space,
 * and not `.` or `..` (a URL resolves such a path segment away, so no HTTP route could name it).
 */
export function isIdentifier(value: unknown): value is string {
  return firstProblem(value) === null;
}

/**
 * Returns `value` when it is a valid identifier (tenant, run, grant, agent name, principal,
 * actor; see {@link isIdentifier}). Otherwise throws `INVALID_ARGUMENT` naming `field` and, for a
 * hidden character, its code point and position, so the library, the CLI and HTTP give one answer
 * (docs/design/decisions.md "Identifiers").
 */
export function requireIdentifier(field: string, value: unknown): string {
  const problem = identifierProblem(value);
  if (problem !== null) throw invalidArgument(field, problem);
  return value as string;
}

function firstLoneSurrogate(value: string): number {
  for (let index = 0; index < value.length; index += 1) {
    const unit = value.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        index += 1;
        continue;
      }
      return index;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return index;
  }
  return -1;
}

// The value as a JSON string with every hidden character escaped, so a message never prints one raw.
function shown(value: string): string {
  return escapeHidden(JSON.stringify(value));
}

const EVERY_HIDDEN = new RegExp(HIDDEN.source, 'gu');

/**
 * `text` with every hidden character (control, format, line or paragraph separator; see
 * identifiers above) written as `\u202e`, so text from a request or a store, shown in a message,
 * a log or a terminal, can neither hide nor reorder what surrounds it, nor drive a terminal (ESC,
 * BEL, CR). Characters `keep` answers true for stay as they are (a table keeps the line feeds
 * between its rows; a terminal keeps the joiners emoji need).
 */
export function escapeHidden(text: string, keep: (character: string) => boolean = () => false): string {
  return text.replace(EVERY_HIDDEN, (character) => (keep(character) ? character : `\\u${(character.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`));
}

function codePoint(value: number): string {
  return `U+${value.toString(16).toUpperCase().padStart(4, '0')}`;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Normalises a run id: `run_<ULID>` as is, a bare ULID gets the `run_` prefix
 * (docs/concepts/glossary.md, "run"), and any other valid identifier is a caller-supplied id kept
 * as given. Throws `INVALID_ARGUMENT` naming `field` otherwise.
 */
export function normaliseRunId(field: string, value: unknown): string {
  const id = requireIdentifier(field, value);
  return ULID.test(id) ? `run_${id}` : id;
}

/** The tenant name API keys use to mean every tenant (`*`); never a tenant of its own. */
export const EVERY_TENANT = '*';

/**
 * Returns `value` when it names one tenant: a valid identifier ({@link requireIdentifier}) other
 * than `*`, which API keys use to mean every tenant, so a tenant literally named `*` could be
 * halted or given a quota while nothing real stopped. Throws `INVALID_ARGUMENT` naming `field`
 * otherwise.
 */
export function requireTenant(field: string, value: unknown): string {
  const tenant = requireIdentifier(field, value);
  if (tenant === EVERY_TENANT) {
    throw invalidArgument(field, `'${EVERY_TENANT}' means every tenant for API keys and is not a tenant name; name one tenant`);
  }
  return tenant;
}

/**
 * The prefix of the tenant names quotaplane keeps its own audit chains under (`quotaplane:plane`
 * for the plane-wide ceiling, `quotaplane:keys` for keys of every tenant). No customer tenant may
 * carry it: those chains are read (`audit --tenant quotaplane:plane`, `audit --verify`) but never
 * admitted into, given a quota, halted or listed as tenants.
 */
export const RESERVED_TENANT_PREFIX = 'quotaplane:';

/**
 * The tenant whose audit chain holds the creation and revocation of keys for every tenant
 * (`tenant: '*'`), which belong to no one tenant's chain. Keys of one tenant are audited in that
 * tenant's chain. `audit --verify` checks this chain as it checks every other.
 */
export const KEYS_AUDIT_TENANT = 'quotaplane:keys';

/**
 * The reserved audit chain of plane-wide changes (docs/design/rules.md#k2): the plane-wide ceiling
 * belongs to no one tenant, so `plane.set` and `plane.update` rows are appended to this chain, as
 * key changes of every tenant go to `quotaplane:keys`. `audit --verify` checks it as it checks
 * every other.
 */
export const PLANE_AUDIT_TENANT = 'quotaplane:plane';

/** quotaplane's own audit chains, which `audit --verify` walks with the tenants' (see {@link RESERVED_TENANT_PREFIX}). */
export const RESERVED_AUDIT_CHAINS: readonly string[] = Object.freeze([KEYS_AUDIT_TENANT, PLANE_AUDIT_TENANT]);

/** True when `tenant` begins with {@link RESERVED_TENANT_PREFIX}: one of quotaplane's own audit chains, no customer tenant. */
export function isReservedTenant(tenant: string): boolean {
  return tenant.startsWith(RESERVED_TENANT_PREFIX);
}

/**
 * Returns `value` when it names a tenant that may be written to or admitted into: a tenant name
 * ({@link requireTenant}) that does not begin with {@link RESERVED_TENANT_PREFIX}. Every
 * tenant-scoped write (admission, settle, resume, heartbeat, dispatch, release, quota, halt, lift,
 * plane weight, API key) takes its tenant through this. Throws `INVALID_ARGUMENT` naming `field`.
 */
export function requireCustomerTenant(field: string, value: unknown): string {
  const tenant = requireTenant(field, value);
  if (isReservedTenant(tenant)) {
    throw invalidArgument(
      field,
      `'${tenant}' begins with '${RESERVED_TENANT_PREFIX}', a prefix reserved for quotaplane's own audit chains ` +
        `(quotaplane:plane, quotaplane:keys), which can be read with audit but take no admission, quota or halt; name another tenant`,
    );
  }
  return tenant;
}

// Renders docs/reference/http.md from the service's own GET /openapi.json: the app is built exactly
// as the tests build it, on a private in-memory SQLite store, and asked for its document. Nothing
// here describes a route by hand, so the page cannot drift from the schemas the server validates with.
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { GENERATED_NOTICE, escapeCell } from './markdown.js';

/** A JSON Schema node as the OpenAPI document holds it (only the keywords rendered here). */
interface Schema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly Schema[];
  readonly items?: Schema;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly description?: string;
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly pattern?: string;
  readonly $ref?: string;
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly schema: Schema;
}

interface Response {
  readonly description?: string;
  readonly content?: Readonly<Record<string, { readonly schema?: Schema }>>;
  readonly headers?: Readonly<Record<string, { readonly description?: string }>>;
}

interface Operation {
  readonly operationId: string;
  readonly summary?: string;
  readonly tags?: readonly string[];
  readonly security?: readonly unknown[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly required?: boolean; readonly content: Readonly<Record<string, { readonly schema: Schema }>> };
  readonly responses: Readonly<Record<string, Response>>;
}

interface OpenApi {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string; readonly description?: string };
  readonly components?: { readonly schemas?: Readonly<Record<string, Schema>> };
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
}

/** Builds the service on a throw-away in-memory store and answers its GET /openapi.json. */
export async function fetchOpenApi(): Promise<OpenApi> {
  const store = await openStore('sqlite::memory:');
  try {
    const keys = store.apiKeys?.();
    if (keys === undefined) throw new Error('the SQLite store has no apiKeys()');
    const app = await buildApp({ plane: createPlane({ store }), store, keys });
    try {
      const reply = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (reply.statusCode !== 200) throw new Error(`GET /openapi.json answered ${reply.statusCode}`);
      return reply.json<OpenApi>();
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
  }
}

/** Renders the whole HTTP reference page from `document` (default: the live app's document). */
export async function renderHttpReference(document?: OpenApi): Promise<string> {
  const doc = document ?? (await fetchOpenApi());
  const lines: string[] = [];
  lines.push('# HTTP API reference', '', GENERATED_NOTICE, '');
  lines.push(
    `${doc.info.title} ${doc.info.version}, OpenAPI ${doc.openapi}. ${doc.info.description ?? ''}`.trim(),
    '',
    'The running service serves this document itself at `GET /openapi.json`; generate a client in any',
    'language from it. Every route under `/v1` takes and answers JSON; request bodies refuse members',
    'they do not know (400 `INVALID_ARGUMENT` naming the member). Amounts are non-negative integers',
    'no larger than 2^53 − 1; instants are Unix milliseconds (names ending in `Ms`).',
    '',
    '## Authentication',
    '',
    'Every route except `/healthz`, `/readyz` and `/openapi.json` needs `Authorization: Bearer <key>`,',
    'a key from `quotaplane keys create` (see [the CLI reference](cli.md#quotaplane-keys)). The **auth**',
    'line of each operation says which keys it answers:',
    '',
    '- **runner**: any key. A runner key acts for its own tenant only; an operator key acts for a',
    '  tenant it covers, named in `tenant` (an operator key of every tenant must name one).',
    '- **operator**: operator keys only, for a `{tenant}` they cover. Any other key gets 404, so a',
    '  runner key cannot learn which operator routes exist.',
    '- **service**: the process itself; `/metrics` answers only an operator key of every tenant.',
    '- **none**: no key.',
    '',
    'Only an operator key may send `atMs` (the instant to decide at) or `exempt`; a runner key',
    'sending either gets 400 naming it.',
    '',
  );
  lines.push(...renderProblem(doc), '');
  lines.push('## Operations', '');
  const operations = listOperations(doc);
  for (const { method, path, operation } of operations) {
    lines.push(`- [\`${method} ${path}\`](#${operation.operationId.toLowerCase()}) ${operation.operationId}`);
  }
  lines.push('');
  for (const { method, path, operation } of operations) lines.push(...renderOperation(method, path, operation), '');
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

function listOperations(doc: OpenApi): { method: string; path: string; operation: Operation }[] {
  const out: { method: string; path: string; operation: Operation }[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) out.push({ method: method.toUpperCase(), path, operation });
  }
  return out;
}

function renderProblem(doc: OpenApi): string[] {
  const problem = doc.components?.schemas?.Problem;
  if (problem === undefined) return [];
  const lines = [
    '## Errors',
    '',
    'Every error answer is `application/problem+json` (RFC 9457) with this shape; a refusal adds its',
    'own figures as extension members. What each `code` means and what to do about it is in',
    '[errors and exit codes](errors.md).',
    '',
  ];
  lines.push(...memberTable(problem, 'response'));
  return lines;
}

function renderOperation(method: string, path: string, operation: Operation): string[] {
  const lines = [`### ${operation.operationId}`, '', `\`${method} ${path}\``, ''];
  if (operation.summary) lines.push(operation.summary, '');
  lines.push(`- **operationId**: \`${operation.operationId}\``, `- **auth**: ${authOf(operation)}`, '');

  const parameters = operation.parameters ?? [];
  if (parameters.length > 0) {
    lines.push('**Parameters**', '', '| name | in | type | required | bounds | description |', '|---|---|---|---|---|---|');
    const order = { path: 0, query: 1, header: 2, cookie: 3 } as Record<string, number>;
    const sorted = [...parameters].sort((a, b) => (order[a.in] ?? 9) - (order[b.in] ?? 9));
    for (const p of sorted) {
      lines.push(
        `| \`${p.name}\` | ${p.in} | ${escapeCell(typeOf(p.schema))} | ${p.required === true ? 'yes' : 'no'} | ${escapeCell(boundsOf(p.name, p.schema))} | ${escapeCell(describe(p.description, p.schema))} |`,
      );
    }
    lines.push('');
  }

  const body = operation.requestBody;
  if (body !== undefined) {
    for (const [mediaType, { schema }] of Object.entries(body.content)) {
      lines.push(`**Request body** (\`${mediaType}\`${body.required === true ? ', required' : ''})`, '');
      lines.push(...memberTable(schema, 'request'), '');
    }
  }

  lines.push('**Responses**', '');
  for (const [status, response] of Object.entries(operation.responses)) {
    const media = Object.entries(response.content ?? {});
    const problem = media.some(([, { schema }]) => schema?.$ref !== undefined);
    if (/^[45]/.test(status)) {
      lines.push(`- **${status}**${problem ? ' (problem details)' : ''}: ${response.description ?? ''}`);
      const headers = Object.entries(response.headers ?? {}).filter(([name]) => name !== 'x-request-id');
      for (const [name, header] of headers) lines.push(`  - header \`${name}\`: ${header.description ?? ''}`);
      continue;
    }
    const described = response.description && response.description !== 'Default Response' ? `: ${response.description}` : '';
    lines.push(`- **${status}**${media.length > 0 ? ` (\`${media.map(([type]) => type).join('`, `')}\`)` : ''}${described}`);
    for (const [, { schema }] of media) {
      if (schema === undefined) continue;
      const table = memberTable(schema, 'response');
      if (table.length > 0) lines.push('', ...table.map((line) => `  ${line}`));
      else if (schema.description) lines.push(`  - ${schema.description}`);
    }
    lines.push('');
  }
  return lines;
}

function authOf(operation: Operation): string {
  if (operation.security === undefined || operation.security.length === 0) return 'none';
  const tag = operation.tags?.[0] ?? 'operator';
  return `${tag} (bearer key)`;
}

/** One row per member at every depth: `a.b`, `a[]`, `a{}` for array items and map values. */
function memberTable(schema: Schema, side: 'request' | 'response'): string[] {
  const rows: string[] = [];
  const walk = (node: Schema, prefix: string, depth: number): void => {
    const object = objectBranch(node);
    if (object === undefined || depth > 6) return;
    const required = new Set(object.required ?? []);
    for (const [name, member] of Object.entries(object.properties ?? {})) {
      const at = prefix === '' ? name : `${prefix}.${name}`;
      const cells = [
        `\`${at}\``,
        escapeCell(typeOf(member)),
        required.has(name) ? 'yes' : 'no',
        ...(side === 'request' ? [escapeCell(boundsOf(name, member))] : []),
        escapeCell(describe(member.description, member)),
      ];
      rows.push(`| ${cells.join(' | ')} |`);
      walk(member, at, depth + 1);
      const items = arrayItems(member);
      if (items !== undefined) walk(items, `${at}[]`, depth + 1);
      const values = mapValues(member);
      if (values !== undefined) walk(values, `${at}{}`, depth + 1);
    }
  };
  const top = arrayItems(schema);
  if (top !== undefined) walk(top, '[]', 0);
  else walk(schema, '', 0);
  if (rows.length === 0) return [];
  const header =
    side === 'request'
      ? ['| member | type | required | bounds | description |', '|---|---|---|---|---|']
      : ['| member | type | always | description |', '|---|---|---|---|'];
  return [...header, ...rows];
}

function objectBranch(node: Schema): Schema | undefined {
  if (node.properties !== undefined) return node;
  for (const branch of node.anyOf ?? []) {
    const found = objectBranch(branch);
    if (found !== undefined) return found;
  }
  return undefined;
}

function arrayItems(node: Schema): Schema | undefined {
  if (node.items !== undefined) return node.items;
  for (const branch of node.anyOf ?? []) {
    const found = arrayItems(branch);
    if (found !== undefined) return found;
  }
  return undefined;
}

function mapValues(node: Schema): Schema | undefined {
  if (typeof node.additionalProperties === 'object') return node.additionalProperties;
  for (const branch of node.anyOf ?? []) {
    const found = mapValues(branch);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The type in words: `integer`, `string`, `"a" \| "b"`, `array of string`, `object or null`. */
function typeOf(node: Schema): string {
  if (node.$ref !== undefined) return node.$ref.replace('#/components/schemas/', '');
  if (node.enum !== undefined) return node.enum.map((value) => JSON.stringify(value)).join(' or ');
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.anyOf !== undefined) {
    const parts = node.anyOf.map(typeOf);
    return [...new Set(parts)].join(' or ');
  }
  const type = Array.isArray(node.type) ? node.type.join(' or ') : (node.type as string | undefined);
  if (type === 'array') return `array of ${node.items === undefined ? 'any' : typeOf(node.items)}`;
  if (type === 'object' && node.properties === undefined && typeof node.additionalProperties === 'object') {
    return `map of ${typeOf(node.additionalProperties)}`;
  }
  return type ?? 'any';
}

/** Limits, pattern and unit: `0 … 2^53 − 1`, `1–200 chars`, `ms`. */
function boundsOf(name: string, node: Schema): string {
  const parts: string[] = [];
  const numeric = node.minimum !== undefined || node.maximum !== undefined ? node : node.anyOf?.find((b) => b.minimum !== undefined || b.maximum !== undefined);
  if (numeric !== undefined) parts.push(`${numeric.minimum ?? ''} … ${numeric.maximum === undefined ? '' : bigNumber(numeric.maximum)}`.trim());
  const text = node.minLength !== undefined || node.maxLength !== undefined ? node : node.anyOf?.find((b) => b.maxLength !== undefined);
  if (text !== undefined) parts.push(`${text.minLength ?? 0}–${text.maxLength ?? '∞'} chars`);
  if (node.maxItems !== undefined) parts.push(`at most ${node.maxItems} items`);
  if (node.pattern !== undefined) parts.push(`pattern \`${node.pattern}\``);
  const unit = unitOf(name);
  if (unit !== undefined) parts.push(unit);
  return parts.join('; ');
}

function bigNumber(value: number): string {
  if (value === Number.MAX_SAFE_INTEGER) return '2^53 − 1';
  return String(value);
}

/** The unit a member's name carries (the codebase puts units in names). */
function unitOf(name: string): string | undefined {
  if (/AtMs$|^atMs$/.test(name)) return 'Unix ms';
  if (/Ms$/.test(name) || name === 'wait') return 'ms';
  if (/Seconds$/.test(name)) return 's';
  if (name === 'minorUnitsPerMillionTokens') return 'minor units per million tokens';
  if (/MinorUnits/.test(name) || name === 'minorUnits') return 'minor units';
  if (/Tokens/.test(name) || name === 'tokens') return 'tokens';
  if (/Bytes$/.test(name)) return 'bytes';
  return undefined;
}

function describe(description: string | undefined, node: Schema): string {
  const base = description ?? node.anyOf?.find((b) => b.description !== undefined)?.description ?? '';
  if (node.default === undefined) return base;
  return `${base}${base === '' ? '' : '; '}default \`${JSON.stringify(node.default)}\``;
}

import assert from 'node:assert/strict';

import { isQuotaError, type QuotaErrorCode } from '../../core/errors.js';

/** The shape every answer of the port shares: ok, or a refusal value with a `code`. */
export type Outcome = { readonly ok: true } | { readonly ok: false; readonly refusal: { readonly code: string } };

/** The refusal of `O` whose code is `C`. */
export type RefusalOf<O extends Outcome, C extends string> = Extract<Extract<O, { ok: false }>['refusal'], { code: C }>;

/** Asserts `outcome` is ok; the message shows the refusal otherwise. Returns the narrowed outcome. */
export function assertOk<O extends Outcome>(outcome: O, what: string): Extract<O, { ok: true }> {
  if (!outcome.ok) assert.fail(`${what}: expected ok, got refusal ${JSON.stringify(outcome.refusal)}`);
  return outcome as Extract<O, { ok: true }>;
}

/**
 * Asserts `outcome` is a refusal with `code` whose fields include `fields` (each compared with
 * deep strict equality; other fields are not examined). Returns the narrowed refusal.
 */
export function assertRefused<O extends Outcome, C extends string>(
  outcome: O,
  code: C,
  fields: Partial<RefusalOf<O, C>>,
  what: string,
): RefusalOf<O, C> {
  if (outcome.ok) assert.fail(`${what}: expected a ${code} refusal, got ok`);
  const refusal = outcome.refusal as unknown as Record<string, unknown>;
  assert.equal(refusal.code, code, `${what}: refusal code (refusal ${JSON.stringify(refusal)})`);
  for (const [field, expected] of Object.entries(fields)) {
    assert.deepEqual(refusal[field], expected, `${what}: refusal field '${field}' (refusal ${JSON.stringify(refusal)})`);
  }
  return outcome.refusal as RefusalOf<O, C>;
}

/** Asserts `action` rejects with a `QuotaError` of `code`; the message names what was expected and what came. */
export async function assertRejectsWith(action: () => Promise<unknown>, code: QuotaErrorCode, what: string): Promise<void> {
  let settled: { value: unknown } | null = null;
  try {
    settled = { value: await action() };
  } catch (error) {
    if (isQuotaError(error, code)) return;
    const got = error instanceof Error ? `${error.name}${'code' in error ? ` ${String(error.code)}` : ''}: ${error.message}` : String(error);
    assert.fail(`${what}: expected QuotaError ${code}, got ${got}`);
  }
  assert.fail(`${what}: expected QuotaError ${code}, but it resolved with ${JSON.stringify(settled.value)}`);
}

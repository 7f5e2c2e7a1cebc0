import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';

/** The instrumentation scope of quotaplane's spans: the name a host's tracer provider sees. */
export const TRACER_NAME = 'quotaplane';

/** The spans the plane starts, one per call of the verb, from its validation to its answer. */
export type PlaneSpanName = 'quotaplane.admit' | 'quotaplane.settle' | 'quotaplane.dispatch';

/**
 * The attributes of the plane's spans:
 * - `quotaplane.tenant`, `quotaplane.run`: the call's tenant and run, once validated (absent on a
 *   span whose input was refused before they were known);
 * - `quotaplane.outcome`: `admitted` or `refused` (admit), `settled` or `already-settled` (settle),
 *   `counted` or `refused` (dispatch);
 * - `quotaplane.refusal.code`: the refusal's code (`TooManyRuns`, `SpentOut`, `RateLimited`, …);
 * - `quotaplane.error.code`: the `QuotaError` code of a call that threw (its span's status is ERROR);
 * - `quotaplane.grant` (dispatch), `quotaplane.epoch` (settle).
 */
export const SPAN_ATTRIBUTES = Object.freeze({
  tenant: 'quotaplane.tenant',
  run: 'quotaplane.run',
  outcome: 'quotaplane.outcome',
  refusalCode: 'quotaplane.refusal.code',
  errorCode: 'quotaplane.error.code',
  grant: 'quotaplane.grant',
  epoch: 'quotaplane.epoch',
});

// A ProxyTracer: it follows whatever provider the host registers, even after this module loaded.
const tracer = trace.getTracer(TRACER_NAME);

/**
 * Runs `call` inside a span named `name` (OpenTelemetry, `@opentelemetry/api`): the span ends when
 * the call settles; a call that throws records the exception, sets `quotaplane.error.code` and the
 * status ERROR, and rethrows. `call` sets its attributes on the span it is given, through
 * {@link setSpanAttribute}, which does nothing unless the span records. Without a registered SDK the
 * API answers a non-recording span and nothing else is allocated or recorded. The span is not made
 * the active one: a decision's store work is shared by a batch (docs/design/architecture.md, "Group
 * commit"), so no store span would be this call's alone.
 */
export async function inSpan<T>(name: PlaneSpanName, call: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name);
  try {
    return await call(span);
  } catch (error) {
    if (span.isRecording()) recordError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Sets one attribute on `span` when it records (so a non-recording span costs no call past this test). */
export function setSpanAttribute(span: Span, key: string, value: string | number): void {
  if (span.isRecording()) span.setAttribute(key, value);
}

/** Records a refusal's code and `outcome` on `span`, when it records. */
export function setSpanOutcome(span: Span, outcome: string, refusalCode?: string): void {
  if (!span.isRecording()) return;
  span.setAttribute(SPAN_ATTRIBUTES.outcome, outcome);
  if (refusalCode !== undefined) span.setAttribute(SPAN_ATTRIBUTES.refusalCode, refusalCode);
}

function recordError(span: Span, error: unknown): void {
  const code = typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'INTERNAL';
  span.setAttribute(SPAN_ATTRIBUTES.errorCode, code);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * The bound on every figure of the books (DESIGN.md decision 2, issue 9 fault 4) for the quoted
 * schema `s`: `quota_require_fits` raises SQLSTATE `QP001` when `total + adding` would pass
 * 2^53 − 1, with the input field as the message, the figure's name as the detail and the two
 * operands as the hint (`<total> <adding>`). Raised inside a decision function, it rolls the whole
 * call back, so nothing is written; `toQuotaError` turns it into the same `INVALID_ARGUMENT` the
 * SQLite adapter throws (`sumOverflowError`). Callers test `total + adding` inline first and call it
 * only when it will raise: a call is a statement of its own, a noticeable part of a decision's cost.
 */
export const AMOUNT_OVERFLOW_SQLSTATE = 'QP001';

export function booksFunctionsSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_require_fits(p_field text, p_what text, p_total numeric, p_adding numeric) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  IF coalesce(p_total, 0) + coalesce(p_adding, 0) > 9007199254740991 THEN
    RAISE EXCEPTION USING ERRCODE = '${AMOUNT_OVERFLOW_SQLSTATE}', MESSAGE = p_field, DETAIL = p_what,
      HINT = coalesce(p_total, 0)::text || ' ' || coalesce(p_adding, 0)::text;
  END IF;
END
$fn$;
`;
}

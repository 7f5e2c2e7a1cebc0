import { Ajv, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

import { identifierProblem } from '../core/identifiers.js';

/**
 * The schema keyword that checks a string against quotaplane's identifier rule
 * (docs/design/decisions.md "Identifiers"), so a request answers with the library's own message, naming the field and the code point.
 */
export const IDENTIFIER_KEYWORD = 'x-quotaplane-identifier';

/*
 * Request validation. Fastify's default Ajv removes unknown members and coerces
 * types, which would turn `{ "epoch": "1", "epohc": 2 }` into a valid settle. Bodies here are
 * checked as sent: nothing removed, nothing coerced, so an unknown member or a string where a
 * number belongs is a 400 naming the field. Query strings and path parameters arrive as text, so
 * their numbers (`limit`) are coerced; unknown members are refused there too.
 */

const SHARED: Options = {
  allErrors: false,
  // Each error carries the value and the schema it failed, so the 400 can say what was sent and
  // what is allowed (see validationField in errors.ts).
  verbose: true,
  removeAdditional: false,
  useDefaults: false,
  // TypeBox emits plain JSON Schema plus descriptive keywords Ajv's strict mode would reject.
  strict: false,
};

/**
 * A Fastify validator compiler: strict for `body`, coercing scalars for `querystring`, `params`
 * and `headers`. Each call makes its own Ajv instances, so two apps never share compiled schemas.
 */
export function strictValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodies = withIdentifierKeyword(new Ajv({ ...SHARED, coerceTypes: false }));
  const scalars = withIdentifierKeyword(new Ajv({ ...SHARED, coerceTypes: true }));
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodies : scalars;
    return ajv.compile(schema as object);
  };
}

function withIdentifierKeyword(ajv: Ajv): Ajv {
  const validate = (enabled: boolean, data: unknown): boolean => {
    if (!enabled) return true;
    const problem = identifierProblem(data);
    if (problem === null) return true;
    validate.errors = [{ keyword: IDENTIFIER_KEYWORD, message: problem, params: {} }];
    return false;
  };
  validate.errors = null as null | Array<{ keyword: string; message: string; params: Record<string, never> }>;
  // Checked before the length keywords, so an over-long id gets the same sentence as from the library.
  ajv.addKeyword({ keyword: IDENTIFIER_KEYWORD, type: 'string', schemaType: 'boolean', errors: true, validate, before: 'maxLength' } as never);
  return ajv;
}

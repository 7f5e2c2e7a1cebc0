import { Ajv, type Options, type ValidateFunction } from 'ajv';
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

// Validators compiled so far, per schema object, for the life of the process: a validator depends
// only on its schema and the options above, the same for every app, so an app built from the same
// route modules reuses it instead of compiling it again (a process builds one app; the tests
// build hundreds).
const compiledBodies = new WeakMap<object, ValidateFunction>();
const compiledScalars = new WeakMap<object, ValidateFunction>();

/**
 * A Fastify validator compiler: strict for `body`, coercing scalars for `querystring`, `params`
 * and `headers`. Each call makes its own Ajv instances; a schema object that an earlier app
 * already compiled gets that app's validator back.
 */
export function strictValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodies = withIdentifierKeyword(new Ajv({ ...SHARED, coerceTypes: false }));
  const scalars = withIdentifierKeyword(new Ajv({ ...SHARED, coerceTypes: true }));
  return ({ schema, httpPart }) => {
    const [ajv, compiled] = httpPart === 'body' ? [bodies, compiledBodies] : [scalars, compiledScalars];
    const known = compiled.get(schema as object);
    if (known !== undefined) return known;
    const validate = ajv.compile(schema as object);
    compiled.set(schema as object, validate);
    return validate;
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

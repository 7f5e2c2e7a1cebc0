import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';

import { IDENTIFIER_KEYWORD } from '../../src/http/validation.js';

/*
 * Checks of the service's OpenAPI document that a client generator relies on, shared by the
 * document tests and the response-contract test. The document is what `GET /openapi.json` answers.
 */

/** The parts of an OpenAPI 3.1 document these checks read. */
export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Record<string, Record<string, OpenApiOperation>>;
  readonly [member: string]: unknown;
}

/** One operation: its parameters, request body and responses. */
export interface OpenApiOperation {
  readonly parameters?: readonly { readonly name: string; readonly in: string; readonly description?: string; readonly schema?: object }[];
  readonly requestBody?: { readonly content: Record<string, { readonly schema: object }> };
  readonly responses: Record<string, OpenApiResponse>;
  readonly [member: string]: unknown;
}

/** One documented response. */
export interface OpenApiResponse {
  readonly description: string;
  readonly content?: Record<string, { readonly schema?: object }>;
  readonly headers?: Record<string, unknown>;
}

/**
 * An Ajv for JSON Schema draft 2020-12, the dialect of OpenAPI 3.1 schema objects. Strict, so a
 * keyword no generator knows is an error, except the annotations OpenAPI and the service add.
 */
export function openApiAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
  ajv.addKeyword({ keyword: IDENTIFIER_KEYWORD, schemaType: 'boolean' });
  for (const keyword of ['example', 'xml', 'externalDocs', 'discriminator']) ajv.addKeyword(keyword);
  return ajv;
}

/** Every schema object the document holds, with a JSON-pointer-like label saying where. */
export function documentSchemas(document: OpenApiDocument): { readonly where: string; readonly schema: object }[] {
  const found: { where: string; schema: object }[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema !== undefined) found.push({ where: `${at} ${parameter.in} ${parameter.name}`, schema: parameter.schema });
      }
      for (const [media, body] of Object.entries(operation.requestBody?.content ?? {})) found.push({ where: `${at} body ${media}`, schema: body.schema });
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [media, content] of Object.entries(response.content ?? {})) {
          if (content.schema !== undefined) found.push({ where: `${at} ${status} ${media}`, schema: content.schema });
        }
      }
    }
  }
  return found;
}

/**
 * `document` with every `$ref` replaced by what it points at (the error replies point at
 * components.schemas.Problem), so each schema in it can be compiled or applied on its own.
 * The document itself is left as it was.
 */
export async function dereferenced(document: OpenApiDocument): Promise<OpenApiDocument> {
  return (await dereference(structuredClone(document) as never)) as unknown as OpenApiDocument;
}

/**
 * What is wrong with `document`, empty when nothing is: the OpenAPI 3.1 validator's findings
 * (structure, path parameters, duplicate operation ids, …), then every schema object that draft
 * 2020-12 refuses (the OpenAPI 3.1 meta-schema leaves schema objects unchecked).
 */
export async function openApiProblems(document: OpenApiDocument): Promise<string[]> {
  const problems: string[] = [];
  // The validator may dereference in place: give it a copy.
  const result = await validate(structuredClone(document) as never, { validate: { errors: { colorize: false } } });
  if (!result.valid) problems.push(compileErrors(result));
  if (result.specification !== 'OpenAPI') problems.push(`read as ${String(result.specification)}, not OpenAPI`);
  const ajv = openApiAjv();
  let resolved: OpenApiDocument;
  try {
    resolved = await dereferenced(document);
  } catch (error) {
    return [...problems, `a $ref does not resolve: ${error instanceof Error ? error.message : String(error)}`];
  }
  const components = Object.entries((resolved.components as { schemas?: Record<string, object> } | undefined)?.schemas ?? {});
  for (const { where, schema } of [...documentSchemas(resolved), ...components.map(([name, schema]) => ({ where: `components.schemas.${name}`, schema }))]) {
    try {
      ajv.compile(schema);
    } catch (error) {
      problems.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}

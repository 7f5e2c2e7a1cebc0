import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serviceFixture, type ServiceFixture } from './http-fixtures.js';
import { openApiProblems, type OpenApiDocument } from './openapi-check.js';

// GET /openapi.json is what clients in other languages are generated from: it must be a valid
// OpenAPI 3.1 document, and every schema in it a valid JSON Schema 2020-12 schema.
describe('the OpenAPI document', () => {
  let f: ServiceFixture;
  let document: OpenApiDocument;
  beforeAll(async () => {
    f = await serviceFixture();
    document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
  });
  afterAll(() => f.close());

  it('is OpenAPI 3.1 and passes the validator with no finding', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(await openApiProblems(document)).toEqual([]);
  });

  it('holds the error envelope once, as components.schemas.Problem, which every error reply refers to', () => {
    const components = document.components as { schemas?: Record<string, unknown> } | undefined;
    expect(Object.keys(components?.schemas ?? {})).toEqual(['Problem']);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!/^[45]/.test(status)) continue;
          expect(response.content?.['application/problem+json']?.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
        }
      }
    }
  });

  it('names every operation with a unique operationId, which a generated client names its methods after', () => {
    const ids = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(ids.filter((id) => typeof id !== 'string' || !/^[a-z][A-Za-z]*$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes every member a request may send: each parameter, and each body member at every depth', () => {
    const undescribed: string[] = [];
    const walk = (schema: Record<string, any> | undefined, at: string): void => {
      if (schema === undefined || typeof schema !== 'object') return;
      for (const branch of schema.anyOf ?? []) walk(branch, at);
      if (typeof schema.items === 'object') walk(schema.items, `${at}[]`);
      if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${at}{}`);
      for (const [name, member] of Object.entries<Record<string, any>>(schema.properties ?? {})) {
        if (typeof member.description !== 'string' || member.description === '') undescribed.push(`${at}.${name}`);
        // An instant is refused from a runner key (400): the document must say who may send one.
        else if (name === 'atMs' && !member.description.includes('operator key')) undescribed.push(`${at}.${name} (who may send it)`);
        walk(member, `${at}.${name}`);
      }
    };
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const at = `${method.toUpperCase()} ${path}`;
        for (const parameter of operation.parameters ?? []) {
          if (!parameter.description) undescribed.push(`${at} ${parameter.in} ${parameter.name}`);
          else if (parameter.name === 'atMs' && !parameter.description.includes('operator key')) undescribed.push(`${at} ${parameter.in} atMs (who may send it)`);
        }
        for (const [media, body] of Object.entries(operation.requestBody?.content ?? {})) walk(body.schema, `${at} body(${media})`);
      }
    }
    expect(undescribed).toEqual([]);
  });

  // The checks must be able to fail: each broken copy below is something a generator would choke on.
  it.each([
    ['a response without its description', (d: any) => delete d.paths['/healthz'].get.responses['200'].description, /description/],
    ['a status range spelled 4xx', (d: any) => (d.paths['/healthz'].get.responses['4xx'] = { description: 'x' }), /4xx/],
    ['a path parameter not declared', (d: any) => (d.paths['/v1/runs/{run}/settle'].post.parameters = []), /path parameter/],
    ['two operations with one operationId', (d: any) => (d.paths['/readyz'].get.operationId = d.paths['/healthz'].get.operationId), /operationId/],
    ['a $ref to no schema', (d: any) => (d.paths['/readyz'].get.responses['5XX'].content['application/problem+json'].schema.$ref = '#/components/schemas/Nothing'), /Nothing/],
    ['a schema with a type JSON Schema does not have', (d: any) => (d.paths['/healthz'].get.responses['200'].content['application/json'].schema.type = 'thing'), /type/],
    ['a schema keyword no generator knows', (d: any) => (d.paths['/healthz'].get.responses['200'].content['application/json'].schema.nulable = true), /nulable/],
  ])('finds %s', async (_what, breakIt, expected) => {
    const broken = structuredClone(document);
    breakIt(broken);
    const problems = await openApiProblems(broken);
    expect(problems.join('\n')).toMatch(expected);
  });
});

import { createRequire } from 'node:module';

/** Fastify's factory of response serializers: given an app's shared schemas, a compiler per route schema. */
type SerializerFactory = (externalSchemas: unknown, serializerOpts?: unknown) => SerializerCompiler;
/** Compiles the serializer of one response schema (Fastify also passes the route's method, url and status). */
type SerializerCompiler = (route: { readonly schema?: unknown }) => Serialize;
type Serialize = (data: unknown) => string;

// Fastify's own default (fast-json-stringify), resolved from where fastify is installed, so the
// serializers are exactly the ones Fastify would compile by itself.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const { SerializerSelector } = fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory };
const fastifyDefault = SerializerSelector();

interface Compiled {
  readonly externals: ReadonlyArray<readonly [string, unknown]>;
  readonly serializerOpts: unknown;
  readonly serialize: Serialize;
}

// Serializers compiled so far, per response schema object, for the life of the process. A
// serializer is a pure function of its schema, the app's shared schemas and the serializer
// options, so an app whose shared schemas are the same objects reuses it.
const compiledSerializers = new WeakMap<object, Compiled[]>();

/**
 * A Fastify `schemaController.compilersFactory.buildSerializer`: Fastify's default response
 * serializers (fast-json-stringify), each compiled once per process for a given schema object and
 * the same shared schemas. Compiling them was most of the time `buildApp` took (about a quarter of
 * a second per app); a process builds one app, but the tests build hundreds, each from the same
 * route modules.
 */
export const cachedSerializerFactory: SerializerFactory = (externalSchemas, serializerOpts) => {
  const compile = fastifyDefault(externalSchemas, serializerOpts);
  const externals = Object.entries((externalSchemas ?? {}) as Record<string, unknown>);
  return (route) => {
    const schema = route.schema as object;
    const compiled = compiledSerializers.get(schema) ?? [];
    const hit = compiled.find((entry) => entry.serializerOpts === serializerOpts && sameEntries(entry.externals, externals));
    if (hit !== undefined) return hit.serialize;
    const serialize = compile(route);
    compiledSerializers.set(schema, [...compiled, { externals, serializerOpts, serialize }]);
    return serialize;
  };
};

function sameEntries(a: ReadonlyArray<readonly [string, unknown]>, b: ReadonlyArray<readonly [string, unknown]>): boolean {
  return a.length === b.length && a.every(([key, value], i) => b[i]?.[0] === key && b[i]?.[1] === value);
}

import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { PostgresTenantStore } from '../postgres/postgres-tenant-store.js';
import { SqliteTenantStore } from '../sqlite/sqlite-tenant-store.js';

// The store port read capability by capability (store.ts, one file each under port/): every
// member of a tenant handle is declared by exactly one capability, each capability says what it is
// for and which rules cover it, and the adapters implement exactly the members the port declares.

const STORE = fileURLToPath(new URL('../store.ts', import.meta.url));

interface Capability {
  readonly name: string;
  readonly file: string;
  readonly docs: string;
  readonly members: readonly string[];
}

// `TenantStore` and every interface it extends, directly or through another, each with the
// members it declares itself and its docstring.
function tenantStoreInterfaces(): Capability[] {
  const program = ts.createProgram([STORE], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(STORE);
  if (source === undefined) throw new Error('src/store/store.ts was not loaded');
  const module = checker.getSymbolAtLocation(source);
  const tenantStore = module === undefined ? undefined : checker.getExportsOfModule(module).find((symbol) => symbol.getName() === 'TenantStore');
  if (tenantStore === undefined) throw new Error('src/store/store.ts exports no TenantStore');
  const found = new Map<string, Capability>();
  const visit = (type: ts.Type): void => {
    const symbol = type.getSymbol();
    if (symbol === undefined || found.has(symbol.getName())) return;
    const declarations = (symbol.declarations ?? []).filter(ts.isInterfaceDeclaration);
    found.set(symbol.getName(), {
      name: symbol.getName(),
      file: declarations[0]?.getSourceFile().fileName ?? '',
      docs: ts.displayPartsToString(symbol.getDocumentationComment(checker)),
      members: declarations.flatMap((declaration) => declaration.members.map((member) => member.name?.getText() ?? '')),
    });
    for (const base of checker.getBaseTypes(type as ts.InterfaceType)) visit(base);
  };
  visit(checker.getDeclaredTypeOfSymbol(tenantStore));
  return [...found.values()];
}

// The methods an adapter's tenant handle defines, `tenant` aside (a field, not a method).
const adapterMethods = (prototype: object): string[] =>
  Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== 'constructor')
    .sort();

describe('the store port, by capability', () => {
  const interfaces = tenantStoreInterfaces();
  const capabilities = interfaces.filter((capability) => capability.name !== 'TenantStore');
  const members = capabilities.flatMap((capability) => capability.members);

  it('declares every member of TenantStore in exactly one capability under store/port/, none in TenantStore itself', () => {
    expect(members.length).toBeGreaterThan(40);
    expect(interfaces.find((capability) => capability.name === 'TenantStore')?.members).toEqual([]);
    expect(members.filter((name, index) => members.indexOf(name) !== index)).toEqual([]);
    expect(capabilities.filter((capability) => !capability.file.includes('/src/store/port/')).map((capability) => capability.name)).toEqual([]);
  });

  it('gives every capability a docstring that cites the rules covering it', () => {
    expect(capabilities.map((capability) => capability.name).sort()).toEqual([
      'AuditStore',
      'HaltStore',
      'OperatorStore',
      'RetentionStore',
      'RunLifecycleStore',
      'StorePrimitives',
      'TenantAlertsStore',
      'TenantDeletionStore',
      'TenantQuotaStore',
      'TenantScoped',
      'WaitingStore',
    ]);
    const uncited = capabilities.filter((capability) => !/docs\/design\/rules\.md#[a-z]\d/.test(capability.docs));
    expect(uncited.map((capability) => capability.name)).toEqual([]);
  });

  it('is what each adapter implements: no adapter method outside a capability, no capability method missing', () => {
    const port = members.filter((name) => name !== 'tenant').sort();
    const required = port.filter((name) => name !== 'agentUsage');
    for (const prototype of [SqliteTenantStore.prototype, PostgresTenantStore.prototype]) {
      const methods = adapterMethods(prototype);
      expect(methods.filter((name) => !port.includes(name))).toEqual([]);
      expect(required.filter((name) => !methods.includes(name))).toEqual([]);
    }
  });
});

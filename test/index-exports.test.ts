import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import * as quotaplane from '../src/index.js';

const INDEX = fileURLToPath(new URL('../src/index.ts', import.meta.url));

// Every name the package entry exports, resolved to its definition, with the JSDoc found there.
function exportedDefinitions(): { name: string; documented: boolean; isValue: boolean }[] {
  const program = ts.createProgram([INDEX], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(INDEX);
  if (source === undefined) throw new Error('src/index.ts was not loaded');
  const module = checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error('src/index.ts is not a module');
  return checker.getExportsOfModule(module).map((exported) => {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    return {
      name: exported.getName(),
      documented: ts.displayPartsToString(target.getDocumentationComment(checker)).trim().length > 0,
      isValue: (target.flags & ts.SymbolFlags.Value) !== 0,
    };
  });
}

describe('the package entry src/index.ts', () => {
  it('lists its exports by name: no export *', () => {
    expect(readFileSync(INDEX, 'utf8')).not.toMatch(/^\s*export\s+(type\s+)?\*/m);
  });

  it('exports openStore, createPlane, QuotaError and the core decisions as values', () => {
    for (const name of ['openStore', 'createPlane', 'QuotaError', 'periodKey', 'holdFor', 'checkSpend', 'checkRate', 'parseHaltScope', 'haltScopeForms', 'refusalMessage']) {
      expect(typeof (quotaplane as Record<string, unknown>)[name], name).not.toBe('undefined');
    }
  });

  it('gives every export a docstring at its definition', () => {
    const definitions = exportedDefinitions();
    expect(definitions.length).toBeGreaterThan(50);
    expect(definitions.filter((definition) => !definition.documented).map((definition) => definition.name)).toEqual([]);
    // Every value the compiler sees is there at run time too.
    const runtime = new Set(Object.keys(quotaplane));
    expect(definitions.filter((d) => d.isValue && !runtime.has(d.name)).map((d) => d.name)).toEqual([]);
  });
});

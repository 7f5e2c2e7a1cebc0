import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

// Issue #13 item 5: the README's two examples are these files (type-checked with the rest of the
// tests by `tsc -p tsconfig.json`), with the package's own names in place of the source paths.

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

function asPrinted(file: string): string {
  return readFileSync(new URL(`./readme/${file}`, import.meta.url), 'utf8')
    .replaceAll("'../../../src/index.js'", "'quotaplane'")
    .replaceAll("'../../../src/adapters/ai-sdk/index.js'", "'quotaplane/ai-sdk'")
    .replaceAll("'../../../src/adapters/openai-agents/index.js'", "'quotaplane/openai-agents'");
}

describe('the README examples of issue #13', () => {
  for (const file of ['ai-sdk-example.ts', 'openai-agents-example.ts']) {
    it(`prints ${file} as it compiles`, () => {
      expect(README).toContain(`\`\`\`ts\n${asPrinted(file)}\`\`\``);
    });
  }
});

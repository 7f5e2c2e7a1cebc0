import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { readPage } from '../docs/markdown.js';

// The examples of docs/guides/metering-agents.md are these files (type-checked with the rest of the
// tests by `tsc -p tsconfig.json`, and the offline one run by offline-example.test.ts), with the
// package's own names in place of the source paths.

const PAGE = 'docs/guides/metering-agents.md';

function asPrinted(file: string): string {
  return readFileSync(new URL(`./readme/${file}`, import.meta.url), 'utf8')
    .replaceAll("'../../../src/index.js'", "'quotaplane'")
    .replaceAll("'../../../src/adapters/ai-sdk/index.js'", "'quotaplane/ai-sdk'")
    .replaceAll("'../../../src/adapters/openai-agents/index.js'", "'quotaplane/openai-agents'");
}

describe(`the examples of ${PAGE}`, () => {
  for (const file of ['ai-sdk-example.ts', 'openai-agents-example.ts', 'ai-sdk-offline-example.ts']) {
    it(`prints ${file} as it compiles`, () => {
      expect(readPage(PAGE)).toContain(`\`\`\`ts\n${asPrinted(file)}\`\`\``);
    });
  }
});

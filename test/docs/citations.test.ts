import { describe, expect, it } from 'vitest';

import { markdownFiles, readPage } from './markdown.js';

// A reader of the docs can open everything they cite: no issue numbers, no design notes or
// contracts kept outside the repository, no paths that leave it.
const OUTSIDE = [/\bissues? ?#?\d+/i, /\bDESIGN\.md\b/, /§ ?\d/, /\.\.\/shared\b/, /quota-contract/, /\bdecision \d+\b/i];

describe('what the pages cite', () => {
  it('no page of README.md, CHANGELOG.md, docs/ or data/ cites an issue number or a file outside the repository', () => {
    const found = markdownFiles().flatMap((page) =>
      readPage(page)
        .split('\n')
        .flatMap((line, index) => (OUTSIDE.some((pattern) => pattern.test(line)) ? [`${page}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

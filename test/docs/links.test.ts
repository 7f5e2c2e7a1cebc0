import { describe, expect, it } from 'vitest';

import { brokenLink, headingAnchors, linkTargets, markdownFiles, readPage } from './markdown.js';

describe('links between the markdown pages', () => {
  it('every relative link of README.md, docs/ and data/ leads to a file that exists, and every #anchor to a heading there', () => {
    const pages = markdownFiles();
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/README.md');
    const broken = pages.flatMap((page) =>
      linkTargets(readPage(page)).flatMap((target) => {
        const problem = brokenLink(page, target);
        return problem === null ? [] : [`${page}: ${problem}`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('every page under docs/ is reachable from docs/README.md, the index', () => {
    const index = linkTargets(readPage('docs/README.md')).map((target) => target.split('#')[0]);
    const unlisted = markdownFiles()
      .filter((page) => page.startsWith('docs/') && page !== 'docs/README.md')
      .filter((page) => !index.includes(page.slice('docs/'.length)));
    expect(unlisted).toEqual([]);
  });
});

describe('the link checker itself', () => {
  it('finds a missing file, a missing anchor and a link out of the repository, and passes a good link', () => {
    expect(brokenLink('docs/README.md', 'no-such-page.md')).toMatch(/no file docs\/no-such-page\.md/);
    expect(brokenLink('docs/README.md', 'getting-started.md#no-such-heading')).toMatch(/no heading with the anchor #no-such-heading/);
    expect(brokenLink('README.md', '../elsewhere/notes.md')).toMatch(/outside the repository/);
    expect(brokenLink('docs/README.md', 'getting-started.md#install')).toBeNull();
    expect(brokenLink('README.md', '#start')).toBeNull();
    expect(brokenLink('README.md', 'https://example.com/x#y')).toBeNull();
  });

  it('makes anchors as GitHub does, and reads no link inside code', () => {
    expect([...headingAnchors('# A `code` title: with, punctuation\n## Twice\n## Twice\n')]).toEqual([
      'a-code-title-with-punctuation',
      'twice',
      'twice-1',
    ]);
    expect(linkTargets('see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![d](d.png)')).toEqual(['a.md', 'd.png']);
  });
});

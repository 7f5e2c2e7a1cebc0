import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The reference and design pages: generated or written by hand, all of them checked here. */
const PAGES = [
  'docs/reference/http.md',
  'docs/reference/cli.md',
  'docs/reference/configuration.md',
  'docs/reference/errors.md',
  'docs/design/architecture.md',
  'docs/design/decisions.md',
  'docs/design/rules.md',
];

const read = (page: string): string => readFileSync(join(root, page), 'utf8');

/** The anchors a page defines: GitHub's slug of each heading (`-1`, `-2` for repeats) and every `<a id>`. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const match of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (match[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of text.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(match[1] as string);
  return anchors;
}

describe('the reference and design pages', () => {
  it('cite no issue number, no design file outside docs/ and nothing outside the repository', () => {
    for (const page of PAGES) {
      const text = read(page);
      expect(text, page).not.toMatch(/\bissues?\s*#?\d/i);
      expect(text, page).not.toMatch(/DESIGN\.md|quota-contract|\.\.\/shared|contract §/);
    }
  });

  it('link to pages that exist among them, and to anchors those pages define', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = read(page).replace(/```[\s\S]*?```/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = match[1] as string;
        if (/^[a-z]+:/.test(link)) continue;
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file === '' ? page : relative(root, normalize(join(dirname(join(root, page)), file)));
        // Pages outside this set (concepts, guides) belong to other docs; only those that exist are checked.
        if (!PAGES.includes(target)) {
          if (!existsSync(join(root, target)) && !/^docs\/(concepts|guides)\//.test(target)) broken.push(`${page}: ${link}`);
          continue;
        }
        if (anchor !== undefined && !anchorsOf(read(target)).has(anchor)) broken.push(`${page}: ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

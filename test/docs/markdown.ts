import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (two levels above this file). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The repository's markdown pages: the top-level *.md files, and every *.md under docs/ and data/. */
export function markdownFiles(): string[] {
  const top = readdirSync(REPO_ROOT).filter((name) => name.endsWith('.md'));
  return [...top, ...walk('docs'), ...walk('data')].sort();
}

function walk(folder: string): string[] {
  const absolute = join(REPO_ROOT, folder);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(REPO_ROOT, path)).isDirectory()) return walk(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** A page's text, by its path from the repository root. */
export function readPage(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

/** The lines outside fenced code blocks (the others left empty), so an example's `# comment` is no heading. */
export function outsideFences(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** The text outside fenced code blocks and inline code spans, line for line, so links in examples are not read as links. */
export function proseOf(text: string): string {
  return outsideFences(text).replace(/`[^`\n]*`/g, '``');
}

/** Every link and image target in a page's prose: `[text](target)` and `![alt](target)`, title dropped. */
export function linkTargets(text: string): string[] {
  return [...proseOf(text).matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? '');
}

/**
 * The anchor GitHub gives a heading: lower case, every character but letters, digits, spaces, `-`
 * and `_` dropped, spaces turned into `-`; a repeated heading gets `-1`, `-2`, ….
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(text).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = (heading[1] ?? '')
      .replace(/<[^>]*>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  return anchors;
}

/** What is wrong with one relative link of `page`, or null when it leads somewhere that exists. */
export function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: and the like
  const hash = target.indexOf('#');
  const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const destination = pathPart === '' ? join(REPO_ROOT, page) : resolve(dirname(join(REPO_ROOT, page)), pathPart);
  const shown = relative(REPO_ROOT, destination) || '.';
  if (relative(REPO_ROOT, destination).startsWith('..')) return `${target}: leads outside the repository (${shown})`;
  if (!existsSync(destination)) return `${target}: no file ${shown}`;
  if (anchor === null || anchor === '') return null;
  if (!destination.endsWith('.md')) return `${target}: an anchor into ${shown}, which is not a markdown page`;
  const anchors = headingAnchors(readFileSync(destination, 'utf8'));
  return anchors.has(anchor) ? null : `${target}: ${shown} has no heading with the anchor #${anchor}`;
}

/**
 * The pages (README.md, docs/, data/) whose text contains `marker`, with their text. Tests that
 * check a table or an example against the program check every page that carries it, and fail
 * when none does.
 */
export function pagesContaining(marker: string): { page: string; text: string }[] {
  return markdownFiles()
    .map((page) => ({ page, text: readPage(page) }))
    .filter(({ text }) => text.includes(marker));
}

import stringWidth from 'string-width';

import { escapeHidden } from '../../core/identifiers.js';
import type { Operator } from '../../core/operator.js';
import type { Spend } from '../../core/spend.js';
import type { CliIo } from '../io.js';

/*
 * Plain-text rendering shared by the operator commands: aligned tables, instants, durations.
 * Scripts read `--json`; these are for a person at a terminal.
 */

/**
 * Columns padded to their widest cell, two spaces apart; the header row first. No trailing
 * spaces. Widths are display widths (`string-width`: a CJK character or an emoji takes two
 * columns, a combining mark none), so names in any script line up on a terminal.
 */
export function renderTable(header: readonly string[], givenRows: readonly (readonly string[])[]): string {
  // Every cell on one line, whatever it holds: a line break in a halt reason cannot forge a row.
  const rows = givenRows.map((row) => row.map((cell) => terminalSafe(cell, { keepNewlines: false })));
  const widths = header.map((title, column) => Math.max(stringWidth(title), ...rows.map((row) => stringWidth(row[column] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell + ' '.repeat(Math.max((widths[column] ?? 0) - stringWidth(cell), 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/**
 * Lines of `label  value`, each label padded to the widest (display width, as {@link renderTable}),
 * every line led by `indent`: a block of settings that reads as one aligned column of values.
 */
export function labelledLines(rows: readonly (readonly [string, string])[], indent = ''): string[] {
  const safe = rows.map(([label, value]) => [terminalSafe(label, { keepNewlines: false }), terminalSafe(value, { keepNewlines: false })] as const);
  const width = Math.max(0, ...safe.map(([label]) => stringWidth(label)));
  return safe.map(([label, value]) => `${indent}${label}${' '.repeat(width - stringWidth(label))}  ${value}`.trimEnd());
}

/** A duration as its two largest units: `3d 4h`, `2h 5m`, `4m 10s`, `12s`, `250ms`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [name, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0 || parts.length > 0) parts.push(`${count}${name}`);
    rest -= count * size;
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** An operator as `name (basis)`. */
export function operatorText(by: Operator): string {
  return `${by.actor} (${by.basis})`;
}

/** A spend as `N tokens, M minor units`. */
export function spendText(spend: Spend): string {
  return `${spend.tokens} tokens, ${spend.minorUnits} minor units`;
}

/** Writes a command's answer: `document` as JSON with `--json`, else `text()` (made {@link terminalSafe}, line breaks kept). */
export function writeAnswer(io: CliIo, json: boolean, document: unknown, text: () => string): void {
  io.stdout.write(json ? `${JSON.stringify(document, null, 2)}\n` : terminalSafe(text(), { keepNewlines: true }));
}

// What a terminal may get raw of the hidden characters: the zero-width joiners and the tags that
// emoji sequences are made of, which move nothing; every control (ESC, BEL, CR) and every
// reordering or invisible format character is escaped.
const JOINERS_AND_TAGS = /^[\u200c\u200d\u{e0020}-\u{e007f}]$/u;

/**
 * `text` as a terminal can show it without obeying it: every control and format character that
 * could move the cursor, recolour, retitle or reorder the screen (ESC, BEL, CR, U+202E …) written
 * as `\u001b` (core `escapeHidden`). Free text (a halt's reason, an audit detail) is written by
 * other operators and by runners, so it must not reach a terminal raw. Line feeds stay when
 * `keepNewlines` (the text's own line structure); table cells escape them too.
 */
export function terminalSafe(text: string, options: { readonly keepNewlines: boolean }): string {
  return escapeHidden(text, (character) => (options.keepNewlines && character === '\n') || JOINERS_AND_TAGS.test(character));
}

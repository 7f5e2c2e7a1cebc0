import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { main } from '../../src/cli/main.js';

/** The repository root (two levels above this file). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Azure LLM inference trace 2023, kept unmodified in the repository's data folder. */
export const AZURE_TRACE_DIR = join(REPO_ROOT, 'data', 'azure-llm-2023');

/** A stream that keeps what was written, optionally claiming to be a terminal. */
export class CapturedStream {
  readonly chunks: string[] = [];
  readonly isTTY: boolean;
  readonly columns = 100;

  constructor(isTTY = false) {
    this.isTTY = isTTY;
  }

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }

  get text(): string {
    return this.chunks.join('');
  }
}

/** Runs the CLI in process and answers its exit status and both outputs. */
export async function runCli(argv: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = new CapturedStream();
  const stderr = new CapturedStream();
  const status = await main(argv, { stdout, stderr });
  return { status, stdout: stdout.text, stderr: stderr.text };
}

/** A fresh temporary directory and a function that removes it. */
export function temporaryDirectory(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'quotaplane-cli-test-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Writes a trace file (`lines` joined with CRLF, no final line break, as the Azure files are). */
export function writeTrace(directory: string, name: string, lines: readonly string[], lineEnd = '\r\n'): string {
  const path = join(directory, name);
  writeFileSync(path, lines.join(lineEnd));
  return path;
}

/** The trace header. */
export const HEADER = 'TIMESTAMP,ContextTokens,GeneratedTokens';

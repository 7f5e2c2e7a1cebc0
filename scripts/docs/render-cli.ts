// Renders docs/reference/cli.md from the CLI's own help: `quotaplane --help`, then `--help` of every
// command and subcommand it lists, run in process through `main` at a fixed width of 80 columns.
// Nothing here describes a flag by hand, so the page says exactly what `--help` says.
import { main } from '../../src/cli/main.js';
import { GENERATED_NOTICE } from './markdown.js';

/** Runs `quotaplane <args>` in process and answers what it printed on stdout (help goes there). */
export async function helpOf(args: readonly string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const status = await main([...args, '--help'], {
    stdout: { write: (chunk: string) => void (stdout += chunk), columns: 80 },
    stderr: { write: (chunk: string) => void (stderr += chunk), columns: 80 },
  });
  if (status !== 0) throw new Error(`quotaplane ${args.join(' ')} --help exited ${status}: ${stderr}`);
  return stdout;
}

/** The command names a help text lists under `Commands:` (without `help`). */
export function commandsIn(help: string): string[] {
  const section = help.split(/\n(?=\S)/).find((block) => block.startsWith('Commands:'));
  if (section === undefined) return [];
  return section
    .split('\n')
    .slice(1)
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

const EXIT_BLOCK = /\n*Exit status:\n(?: {2}.*\n?)*/;

/** Renders the whole CLI reference page. */
export async function renderCliReference(): Promise<string> {
  const top = await helpOf([]);
  const exitBlock = EXIT_BLOCK.exec(top)?.[0].trim() ?? '';
  const lines: string[] = [
    '# CLI reference',
    '',
    GENERATED_NOTICE,
    '',
    'The `quotaplane` command, exactly as its `--help` prints it. Every command takes `--json` for',
    'one JSON document on stdout instead of text; with `--json` a failure is one JSON line on stderr,',
    '`{"error":{"code","message","exitStatus","field"?}}`. Exit statuses are the same for every command',
    '(listed once at the end; their meaning in detail is in [errors and exit codes](errors.md#cli-exit-statuses)).',
    '',
    '## quotaplane',
    '',
    '```text',
    top.replace(EXIT_BLOCK, '\n').trimEnd(),
    '```',
    '',
  ];
  const commands: string[][] = commandsIn(top).map((name) => [name]);
  for (let i = 0; i < commands.length; i++) {
    const path = commands[i] as string[];
    const help = await helpOf(path);
    lines.push(`## quotaplane ${path.join(' ')}`, '', '```text', help.replace(EXIT_BLOCK, '\n').trimEnd(), '```', '');
    commands.splice(i + 1, 0, ...commandsIn(help).map((name) => [...path, name]));
  }
  lines.push('## Exit statuses', '', '```text', exitBlock, '```');
  return `${lines.join('\n')}\n`;
}

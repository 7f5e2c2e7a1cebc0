/**
 * Exit statuses of every `quotaplane` command. Scripts branch on these, so they are part of the
 * CLI's contract: one shared table for every verb.
 */
export const EXIT = Object.freeze({
  /** The command did what was asked and found nothing wrong. */
  OK: 0,
  /**
   * A negative finding: `replay` found an invariant false; `attention` found conditions; `lift`
   * found no halt standing; `release` found the run closed already (`release --stranded`: a run
   * skipped or whose release failed); `audit --verify` found a row
   * that does not match; or the run or pass named does not exist, or a settle disagrees with its receipt.
   */
  FINDING: 1,
  /** Usage: a bad flag, argument or input file; the message names it. */
  USAGE: 2,
  /**
   * Configuration: the store named cannot be used as configured, and retrying will not help (a
   * wrong password, no such database, schema or file, no quotaplane store there, a path that cannot
   * be created or written, a store that needs `quotaplane migrate`).
   */
  CONFIGURATION: 3,
  /**
   * Operational: the store or the server is unreachable or cannot be used (unavailable, corrupt,
   * newer schema; a server that does not answer, or answers 503).
   */
  STORE_UNREACHABLE: 4,
  /** Partial: `--limit` truncated the answer (it wins over 1: a cut attention list still means conditions stand). */
  TRUNCATED: 5,
  /** A fault inside quotaplane itself (a bug); the message says what failed. */
  INTERNAL: 70,
});

/** One of the {@link EXIT} values. */
export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** The exit-status table as `--help` prints it (docs/guides/operating.md carries the same table). */
export const EXIT_STATUS_HELP = [
  'Exit status:',
  '  0   ok',
  '  1   a negative finding: an invariant is false (replay), conditions need',
  '      attention, no halt stood to lift, the run was closed already (release),',
  '      an audit row does not match (audit --verify), no such tenant, run or',
  '      pass, or a settle disagrees with its receipt',
  '  2   usage: a bad flag, argument or input file (the message names it)',
  '  3   configuration: the store named cannot be used as configured (wrong',
  '      password, no such database, schema or file, no quotaplane store there,',
  '      a path that cannot be written, a store that needs quotaplane migrate)',
  '  4   the store or the server is unreachable or cannot answer now (retry later)',
  '  5   output truncated by --limit (wins over 1)',
  '  70  internal error (a bug in quotaplane)',
].join('\n');

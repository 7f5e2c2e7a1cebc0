/**
 * Exit statuses of every `quotaplane` command. Scripts branch on these, so they are part of the
 * CLI's contract (contract §9.1 keeps one shared table for every verb).
 */
export const EXIT = Object.freeze({
  /** The command did what was asked and found nothing wrong. */
  OK: 0,
  /** A negative finding: for `replay`, an invariant came out false. */
  FINDING: 1,
  /** Usage: a bad flag, argument or input file; the message names it. */
  USAGE: 2,
  /** Operational: the store is unreachable or cannot be used (unavailable, corrupt, newer schema). */
  STORE_UNREACHABLE: 4,
  /** Partial: `--limit` truncated the answer. */
  TRUNCATED: 5,
  /** A fault inside quotaplane itself (a bug); the message says what failed. */
  INTERNAL: 70,
});

/** One of the {@link EXIT} values. */
export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** The exit-status table as `--help` prints it (the README carries the same table). */
export const EXIT_STATUS_HELP = [
  'Exit status:',
  '  0   ok',
  '  1   a negative finding (replay: an invariant is false)',
  '  2   usage: a bad flag, argument or input file (the message names it)',
  '  4   the store is unreachable or cannot be used',
  '  5   output truncated by --limit',
  '  70  internal error (a bug in quotaplane)',
].join('\n');

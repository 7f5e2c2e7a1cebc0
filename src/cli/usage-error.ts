/**
 * A mistake in how the CLI was called or in the input it was given: a bad flag value, an unreadable
 * or malformed trace. `main` prints its message on one line and exits with status 2. The message
 * names what is wrong (the flag, or the file, line and column) and says what to do.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

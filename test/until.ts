/**
 * Polls `condition` every `everyMs` until it holds; throws naming `what` once `withinMs` has passed,
 * so a condition that never comes true fails its test instead of hanging it. A bound, not a timing
 * assertion: tests never assert how soon.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { everyMs = 10, withinMs = 10_000 }: { everyMs?: number; withinMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

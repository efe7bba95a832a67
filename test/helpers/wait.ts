/**
 * Waiting for a condition instead of sleeping for a guess: the suites run on busy 2-core machines, where any fixed
 * pause is either too short (a flake) or too long (minutes of nothing). A deadline is generous, and a missed one
 * says what was awaited.
 */

/** How `waitFor` polls. */
export type WaitOptions = {
  /** What is awaited, for the error when the deadline passes ("instance 0 to take the key"). */
  what: string;
  /**
   * Give up after this long; generous, since only a failure waits it out. Default 20 s, inside vitest's 30 s test
   * timeout, so that a miss fails with this wait's message rather than a bare timeout.
   */
  timeoutMs?: number;
  /** Pause between two looks. Default 50 ms. */
  intervalMs?: number;
};

/**
 * Resolves with the first truthy value `condition` returns (it may be async); a falsy value or a throw means "not
 * yet". Rejects once `timeoutMs` has passed, naming `what` and the last error the condition threw.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  { what, timeoutMs = 20_000, intervalMs = 50 }: WaitOptions,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

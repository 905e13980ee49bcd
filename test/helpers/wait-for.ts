/**
 * Polls `probe` until it returns something truthy, and returns that; fails naming `what` after
 * `timeoutMs`. For effects that come from outside the test's control (a real process, a socket,
 * the file system); what a timer decides belongs on the fake clock instead.
 */
export async function waitFor<T>(probe: () => T | undefined | null | false, what: string, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

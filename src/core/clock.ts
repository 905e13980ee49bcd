/** One day in milliseconds: retention, the dashboard's "last day", date filters. */
export const DAY_MS = 86_400_000;

/** Time as the core sees it; tests inject a fake one so nothing sleeps. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  // Unref'd: a pending poll or wait never keeps a process alive on its own.
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

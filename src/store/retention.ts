import type { Clock } from "../core/clock.ts";

/** How often settled tasks past the retention period are looked for, in ms. */
export const PURGE_EVERY_MS = 3_600_000;

export type RetentionDeps = {
  /** Removes settled tasks that settled before cutoffMs; returns how many. */
  purge: (cutoffMs: number) => number;
  /** How long a settled task is kept, in ms. */
  retentionMs: number;
  clock: Clock;
  onError: (message: string, error: unknown) => void;
  /** Default PURGE_EVERY_MS. */
  everyMs?: number;
};

/**
 * Purges now and then every `everyMs` for as long as OpenCode runs, not only at start. The timer
 * never keeps the process alive; a purge that fails is reported and tried again at the next interval.
 */
export function startRetention({ purge, retentionMs, clock, onError, everyMs = PURGE_EVERY_MS }: RetentionDeps): { stop(): void } {
  let timer: unknown;
  let stopped = false;
  const run = () => {
    try {
      purge(clock.now() - retentionMs);
    } catch (error) {
      onError("Removing old background tasks failed; they are kept until the next try, in an hour", error);
    }
    if (stopped) return;
    timer = clock.setTimeout(run, everyMs);
    (timer as { unref?: () => void }).unref?.();
  };
  run();
  return {
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
    },
  };
}

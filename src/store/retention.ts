import type { Clock } from "../core/clock.ts";

/** How often settled tasks past the retention period are looked for, in ms. */
export const PURGE_EVERY_MS = 3_600_000;
/**
 * How often run history is folded, in ms. More often than the purge: an every-2-s automation adds
 * 150 rows in 5 minutes, and a pass with nothing to fold is one index walk per automation.
 */
export const FOLD_EVERY_MS = 300_000;

export type RetentionDeps = {
  /** Removes settled tasks that settled before cutoffMs; returns how many. */
  purge: (cutoffMs: number) => number;
  /** Folds old quiet automation runs (store/run-history-fold.ts); resolves to how many. */
  fold?: () => Promise<number>;
  /** How long a settled task is kept, in ms. */
  retentionMs: number;
  clock: Clock;
  onError: (message: string, error: unknown) => void;
  /** Default PURGE_EVERY_MS. */
  everyMs?: number;
  /** Default FOLD_EVERY_MS. */
  foldEveryMs?: number;
};

/**
 * Purges (and folds run history) now and then every `everyMs` (`foldEveryMs`) for as long as
 * OpenCode runs, not only at start. The timers never keep the process alive; a pass that fails is
 * reported and tried again at its next interval.
 */
export function startRetention(deps: RetentionDeps): { stop(): void } {
  const { purge, fold, retentionMs, clock, onError, everyMs = PURGE_EVERY_MS, foldEveryMs = FOLD_EVERY_MS } = deps;
  const passes = [
    repeat(clock, everyMs, () => purge(clock.now() - retentionMs), (error) =>
      onError("Removing old background tasks failed; they are kept until the next try, in an hour", error)),
    fold && repeat(clock, foldEveryMs, fold, (error) =>
      onError("Folding old automation runs failed; they are kept whole until the next try", error)),
  ];
  return {
    stop() {
      for (const pass of passes) pass && pass.stop();
    },
  };
}

function repeat(clock: Clock, everyMs: number, work: () => unknown, onError: (error: unknown) => void): { stop(): void } {
  let timer: unknown;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = clock.setTimeout(run, everyMs);
    (timer as { unref?: () => void }).unref?.();
  };
  // The next pass is timed from the end of this one: two passes of one process never overlap.
  const run = () => {
    let pending: unknown;
    try {
      pending = work();
    } catch (error) {
      onError(error);
    }
    if (pending instanceof Promise) pending.catch(onError).finally(schedule);
    else schedule();
  };
  run();
  return {
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
    },
  };
}

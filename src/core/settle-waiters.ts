import type { Clock } from "./clock.ts";

export type WaitOutcome = { timedOut: boolean; aborted: boolean };

/**
 * Lets callers wait until a task settles. `wait` resolves at once when the task is already
 * settled, and always removes its listener and timer, whichever way it ends.
 */
export class SettleWaiters {
  private waiters = new Map<string, Set<() => void>>();
  private aborts = new Set<() => void>();

  constructor(private clock: Clock) {}

  notifySettled(taskId: string): void {
    const set = this.waiters.get(taskId);
    if (!set) return;
    this.waiters.delete(taskId);
    for (const wake of set) wake();
  }

  wait(taskId: string, isSettled: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (isSettled()) return Promise.resolve({ timedOut: false, aborted: false });
    if (signal?.aborted) return Promise.resolve({ timedOut: false, aborted: true });
    return new Promise((resolve) => {
      const finish = (outcome: WaitOutcome) => {
        this.clock.clearTimeout(timer);
        this.aborts.delete(onAbort);
        signal?.removeEventListener("abort", onAbort);
        this.waiters.get(taskId)?.delete(onSettle);
        if (this.waiters.get(taskId)?.size === 0) this.waiters.delete(taskId);
        resolve(outcome);
      };
      const onSettle = () => finish({ timedOut: false, aborted: false });
      const onAbort = () => finish({ timedOut: false, aborted: true });
      this.aborts.add(onAbort);
      const timer = this.clock.setTimeout(() => finish({ timedOut: true, aborted: false }), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      const set = this.waiters.get(taskId) ?? new Set();
      set.add(onSettle);
      this.waiters.set(taskId, set);
    });
  }

  /** Ends every wait as aborted and clears its timer (the plugin is being disposed). */
  abortAll(): void {
    for (const abort of [...this.aborts]) abort();
  }

  /** Listeners still registered; zero once nobody waits. */
  size(): number {
    let count = 0;
    for (const set of this.waiters.values()) count += set.size;
    return count;
  }
}

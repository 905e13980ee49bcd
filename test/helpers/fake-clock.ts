import type { Clock } from "../../src/core/clock.ts";

/** A clock that only moves when told; timers fire in order during `advance`. */
export class FakeClock implements Clock {
  private time = 1_700_000_000_000;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /**
   * The wall clock jumps (NTP, a laptop waking up) while pending timers keep their remaining
   * delay, as real timers do (they run on a monotonic clock). Nothing fires until `advance`.
   */
  jump(ms: number): void {
    this.time += ms;
    for (const timer of this.timers.values()) timer.at += ms;
  }

  pendingTimers(): number {
    return this.timers.size;
  }

  /** Milliseconds until the earliest pending timer is due; undefined when none is pending. */
  nextTimerIn(): number | undefined {
    const due = [...this.timers.values()].map((t) => t.at);
    return due.length > 0 ? Math.min(...due) - this.time : undefined;
  }

  /** Moves time forward, firing due timers (and letting their promises run) in order. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].fn();
      await flush();
    }
    this.time = end;
    await flush();
  }
}

/** Lets pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

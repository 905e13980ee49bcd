import type { Clock } from "./clock.ts";

/**
 * Runs `tick` every `intervalMs` while `shouldRun()` holds, one tick at a time, and holds no
 * timer otherwise. Ticks start on a fixed rate (a slow tick does not push the next one back by its
 * own length), so a missed event is caught within one interval plus one tick.
 * `ensureRunning` is cheap and safe to call after every change of state. A tick or a `shouldRun`
 * that throws is reported to `onError` and the poll goes on (it is what retries). After `stop`
 * it never runs again.
 */
export class Poller {
  private timer: unknown = null;
  private stopped = false;

  constructor(
    private clock: Clock,
    private intervalMs: number,
    private tick: () => Promise<void>,
    private shouldRun: () => boolean,
    private onIdle: () => void = () => {},
    private onError: (message: string, error: unknown) => void = () => {},
  ) {}

  ensureRunning(): void {
    if (this.timer === null && !this.stopped && this.wanted()) this.schedule();
  }

  isRunning(): boolean {
    return this.timer !== null;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs = this.intervalMs): void {
    this.timer = this.clock.setTimeout(() => void this.run(), delayMs);
  }

  /** When it cannot tell (the store fails), it keeps polling: the poll is what retries. */
  private wanted(): boolean {
    try {
      return this.shouldRun();
    } catch (error) {
      this.onError("Could not tell whether background tasks need polling; polling on", error);
      return true;
    }
  }

  private async run(): Promise<void> {
    const startedAt = this.clock.now();
    try {
      await this.tick();
    } catch (error) {
      this.onError("Background task poll failed; the next poll retries", error);
    }
    this.timer = null;
    if (this.stopped) return;
    if (this.wanted()) this.schedule(Math.max(0, this.intervalMs - (this.clock.now() - startedAt)));
    else this.report(this.onIdle);
  }

  private report(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.onError("Background task idle report failed", error);
    }
  }
}

import type { Clock } from "./clock.ts";

/**
 * Runs `tick` every `intervalMs` while `shouldRun()` holds, one tick at a time, and holds no
 * timer otherwise. Ticks start on a fixed rate (a slow tick does not push the next one back by its
 * own length), so a missed event is caught within one interval plus one tick.
 * `ensureRunning` is cheap and safe to call after every change of state.
 */
export class Poller {
  private timer: unknown = null;

  constructor(
    private clock: Clock,
    private intervalMs: number,
    private tick: () => Promise<void>,
    private shouldRun: () => boolean,
    private onIdle: () => void = () => {},
  ) {}

  ensureRunning(): void {
    if (this.timer === null && this.shouldRun()) this.schedule();
  }

  isRunning(): boolean {
    return this.timer !== null;
  }

  stop(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs = this.intervalMs): void {
    this.timer = this.clock.setTimeout(() => void this.run(), delayMs);
  }

  private async run(): Promise<void> {
    const startedAt = this.clock.now();
    try {
      await this.tick();
    } finally {
      this.timer = null;
      if (this.shouldRun()) this.schedule(Math.max(0, this.intervalMs - (this.clock.now() - startedAt)));
      else this.onIdle();
    }
  }
}

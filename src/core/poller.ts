import type { Clock } from "./clock.ts";

/**
 * Runs `tick` every `intervalMs` while `shouldRun()` holds, one tick at a time, and holds no
 * timer otherwise. `ensureRunning` is cheap and safe to call after every change of state.
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

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => void this.run(), this.intervalMs);
  }

  private async run(): Promise<void> {
    try {
      await this.tick();
    } finally {
      this.timer = null;
      this.ensureRunning();
      if (this.timer === null) this.onIdle();
    }
  }
}

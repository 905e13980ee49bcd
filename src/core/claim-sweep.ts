import type { Clock } from "./clock.ts";

/**
 * The one sweep of claims, run by every live process every third of the shortest lease: each
 * step renews what this instance holds and takes over what a gone holder left (tasks here, runs
 * in the automation layer), so a holder's lease never runs out while it lives and a dead
 * holder's work is taken over within one lease length by whichever process looks first. It runs
 * whether or not this process has work of its own: another process's may need taking over.
 */
export class ClaimSweep {
  private timer: unknown = null;
  private running = false;
  private steps: (() => void | Promise<void>)[] = [];

  constructor(
    private clock: Clock,
    private intervalMs: number,
    private onError: (message: string, error: unknown) => void,
  ) {}

  /** Adds a step, run after the earlier ones at every sweep. */
  add(step: () => void | Promise<void>): void {
    this.steps.push(step);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** One sweep now: every step in turn, one that throws logged and the others run all the same. */
  async runOnce(): Promise<void> {
    for (const step of this.steps) {
      try {
        await step();
      } catch (error) {
        this.onError("A claim sweep step failed; the next sweep retries", error);
      }
    }
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => void this.tick(), this.intervalMs);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (!this.running) return;
    await this.runOnce();
    if (this.running) this.schedule();
  }
}

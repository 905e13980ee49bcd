import type { Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import { healthText, type WorkerHealth, type WorkerLink } from "./worker-link.ts";

/**
 * What happens to a worker's running children when it stops answering: they are held (shown as
 * "worker unreachable since …", not failed) for the grace period; if it comes back they go on
 * (one its restart cut off is told to continue, as after a local restart); if not, they settle as
 * error with the reason, and each parent is told once (by the settle).
 */
export class WorkerSupervisor {
  private graceTimers = new Map<string, unknown>();

  /** `core`: the task core, reached through a function (it is built after the workers). */
  constructor(private core: () => TaskManager, private clock: Clock, private graceMs: number, private log: (message: string, error: unknown) => void) {}

  /** The worker's connection reports a change of health. */
  healthChanged(link: WorkerLink, health: WorkerHealth): void {
    if (health.state === "healthy") return void this.back(link);
    if (health.state === "unknown" || this.graceTimers.has(link.name)) return;
    const note = `worker ${link.name} ${healthText(health)}; held up to ${Math.round(this.graceMs / 1000)} s`;
    for (const id of this.runningOn(link.name)) this.core().runningTasks().setProgressNote(id, note);
    const wait = Math.max(0, health.since + this.graceMs - this.clock.now());
    this.graceTimers.set(link.name, this.clock.setTimeout(() => this.giveUp(link), wait));
  }

  stop(): void {
    for (const timer of this.graceTimers.values()) this.clock.clearTimeout(timer);
    this.graceTimers.clear();
  }

  private back(link: WorkerLink): void {
    const timer = this.graceTimers.get(link.name);
    if (timer === undefined) return;
    this.clock.clearTimeout(timer);
    this.graceTimers.delete(link.name);
    for (const id of this.runningOn(link.name)) this.core().runningTasks().setProgressNote(id, undefined);
    this.core().recover((task) => task.worker === link.name).catch((error) => this.log(`Could not check the tasks of worker ${link.name} after it came back`, error));
  }

  private giveUp(link: WorkerLink): void {
    this.graceTimers.delete(link.name);
    const health = link.health();
    if (health.state === "healthy") return;
    const reason = `Worker "${link.name}" was ${healthText(health)} for more than ${Math.round(this.graceMs / 1000)} s (workerGraceSeconds): the child's work there is lost or unknown.`;
    for (const id of this.runningOn(link.name)) this.core().runningTasks().stop(id, reason);
  }

  private runningOn(worker: string): string[] {
    return this.core().activeTasks().filter((t) => t.worker === worker).map((t) => t.id);
  }
}

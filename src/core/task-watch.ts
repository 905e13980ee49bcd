import type { Task } from "./task.ts";
import { formatDuration } from "./format-duration.ts";
import type { TaskLifecycle } from "./task-lifecycle.ts";
import type { CoreContext } from "./core-context.ts";
import type { ParentNotifier } from "./parent-notifier.ts";
import { openChildTasks } from "./nested-tasks.ts";

export type WatchLimits = { staleAfterMinutes: number; maxRunSeconds: number };

/**
 * The polling side of the core, one pass per poll: a single status call for every session,
 * then held notifications go to parents that are idle, running tasks whose idle event was
 * missed are checked, and tasks past their time limit or stuck without activity are stopped.
 */
export class TaskWatch {
  constructor(private ctx: CoreContext, private life: TaskLifecycle, private notifier: ParentNotifier, private limits: WatchLimits) {}

  async poll(): Promise<void> {
    const { host, clock, log } = this.ctx;
    const notifier = this.notifier;
    try {
      const askedAt = clock.now();
      const statuses = await host.statuses();
      // Only the tasks this instance drives: its own statuses say nothing of another process's children.
      const active = this.life.ownedTasks();
      const waiting = notifier.waitingParents();
      notifier.confirmFromHost(statuses, new Set([...waiting, ...active.map((t) => t.parentSessionID)]), askedAt);
      for (const parent of waiting) if (!statuses[parent]) await notifier.deliver(parent);
      await Promise.all(active.filter((t) => !statuses[t.id]).map((t) => this.life.checkCompletion(t.id, true)));
      await Promise.all(this.life.ownedTasks().map((t) => this.enforceLimits(t)));
    } catch (error) {
      log.error("Background task poll failed", error);
    }
  }

  private async enforceLimits(task: Task): Promise<void> {
    try {
      const now = this.ctx.clock.now();
      const maxRunMs = this.limits.maxRunSeconds * 1000;
      if (now - task.promptedAt >= maxRunMs) {
        await this.stop(task, `Timed out after ${formatDuration(maxRunMs)} (maxRunSeconds is ${this.limits.maxRunSeconds}).`);
      } else if (await this.isStale(task, now)) {
        const minutes = this.limits.staleAfterMinutes;
        await this.stop(task, `No activity for ${minutes} minute${minutes === 1 ? "" : "s"}: the task was stopped as stuck.`);
      }
    } catch (error) {
      this.ctx.log.error(`Could not check the limits of task ${task.id}`, error);
    }
  }

  /** Stale when no event came for staleAfterMinutes and the session itself shows nothing newer. */
  private async isStale(task: Task, now: number): Promise<boolean> {
    const staleMs = this.limits.staleAfterMinutes * 60_000;
    const progress = this.life.progress.get(task.id) ?? task.progress;
    if (now - progress.lastActivityAt < staleMs) return false;
    if (openChildTasks(this.ctx.store, task.id).length > 0) return false; // waiting for its own tasks, each watched itself
    const last = (await this.ctx.host.recentMessages(task.id, 1)).at(-1);
    const lastSeen = last ? Math.max(last.createdAt, last.completedAt ?? 0) : 0;
    if (now - lastSeen < staleMs) {
      this.life.progress.recordActivity(task.id, lastSeen);
      return false;
    }
    return true;
  }

  private async stop(task: Task, reason: string): Promise<void> {
    if (!this.life.settle(task.id, "error", { error: reason })) return;
    await this.ctx.host.abort(task.id).catch((error) => this.ctx.log.error(`Could not abort task ${task.id}`, error));
  }
}

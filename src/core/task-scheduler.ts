import type { Task } from "./task.ts";
import { transition } from "./task.ts";
import type { TaskLifecycle } from "./task-lifecycle.ts";

export type ConcurrencyLimits = { maxConcurrentPerModel: number; maxConcurrentTotal: number };

/** The text a task's child is first prompted with (a fork's carries its preamble). */
export type FirstPrompt = (task: Task) => Promise<string>;

const modelKey = (task: Task) => `${task.model.providerID}/${task.model.modelID}`;

/**
 * Starts queued tasks, oldest first, while slots are free: at most `maxConcurrentPerModel`
 * running children per provider/model and `maxConcurrentTotal` in all. A task whose model is full
 * does not hold up one whose model has room. Slots are counted in the store inside a
 * transaction, so two plugin instances on one database never overfill them.
 */
export class TaskScheduler {
  private running = false;
  private again = false;

  constructor(
    private life: TaskLifecycle,
    private limits: ConcurrencyLimits,
    private firstPrompt: FirstPrompt,
  ) {}

  /** Starts what fits now. Safe to call at any time, from anywhere; calls made while it runs are not lost. */
  async startQueued(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        for (let task = this.claimNext(); task; task = this.claimNext()) await this.start(task);
      } while (this.again);
    } finally {
      this.running = false;
    }
  }

  private claimNext(): Task | undefined {
    const { store, clock } = this.life;
    return store.transaction(() => {
      const running = this.life.activeTasks();
      if (running.length >= this.limits.maxConcurrentTotal) return undefined;
      const queued = store.list({ statuses: ["queued"], includeCleared: true });
      const next = queued.find((t) => running.filter((r) => modelKey(r) === modelKey(t)).length < this.limits.maxConcurrentPerModel);
      if (!next) return undefined;
      const now = clock.now();
      transition(next, "running", now);
      next.promptedAt = now;
      next.startedAt = now;
      next.progress.lastActivityAt = now;
      store.save(next);
      store.appendEvent({ taskId: next.id, at: now, kind: "started" });
      return next;
    });
  }

  private async start(task: Task): Promise<void> {
    this.life.progress.track(task.id, task.progress);
    try {
      await this.life.sendPrompt(task, await this.firstPrompt(task));
    } catch (error) {
      this.life.settle(task.id, "error", { error: `Could not start: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
}

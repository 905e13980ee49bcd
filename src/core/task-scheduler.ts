import type { Task } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import { transition } from "./task.ts";
import { errorMessage } from "./errors.ts";
import type { TaskLifecycle } from "./task-lifecycle.ts";
import type { CoreContext } from "./core-context.ts";

export type ConcurrencyLimits = { maxConcurrentPerModel: number; maxConcurrentTotal: number };

/** The text a task's child is first prompted with (a fork's carries its preamble). */
export type FirstPrompt = (task: Task) => Promise<string>;

const modelKey = (task: TaskSummary) => `${task.model.providerID}/${task.model.modelID}`;

/**
 * Starts queued tasks, oldest first, while slots are free: at most `maxConcurrentPerModel`
 * running children per provider/model and `maxConcurrentTotal` in all. A task whose model is full
 * does not hold up one whose model has room. Slots are claimed in the store inside one
 * transaction, so a task is claimed once, even with two plugin instances on one database.
 */
export class TaskScheduler {
  constructor(
    private ctx: CoreContext,
    private life: TaskLifecycle,
    private limits: ConcurrencyLimits,
    private firstPrompt: FirstPrompt,
    /** Children a worker runs at once (from the placement); absent: there are no workers. */
    private capacity: (worker: string) => number = () => 0,
  ) {
    life.events.on("settled", () => this.startQueued()); // a settle frees a slot
  }

  /** Starts what fits now. Safe to call at any time, from anywhere; never rejects. */
  async startQueued(): Promise<void> {
    try {
      // A read first: a write transaction takes the database's write lock, shared by every process.
      if (this.ctx.store.list({ statuses: ["queued"], includeCleared: true }).length === 0) return;
      // dailyBudgetUsd reached: queued tasks wait for the next day (or a raised budget).
      if (this.ctx.spend?.refusal?.()) return;
      const claimed = this.ctx.store.transaction(() => this.claimFitting());
      await this.startAll(claimed);
    } catch (error) {
      this.ctx.log.error("Could not start queued background tasks; the next poll retries", error);
    }
  }

  /**
   * Call inside a store transaction: marks every queued task that fits now as running, oldest
   * first, and returns them. The caller then starts them (`start` / `startAll`).
   */
  claimFitting(): Task[] {
    const { store, clock } = this.ctx;
    const running = this.life.activeTasks();
    const perModel = new Map<string, number>();
    const perWorker = new Map<string, number>();
    const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
    // The limits are this OpenCode's; a worker's children count against its own capacity only.
    for (const task of running) (task.worker ? add(perWorker, task.worker) : add(perModel, modelKey(task)));
    let total = running.filter((t) => !t.worker).length;
    const claimed: Task[] = [];
    for (const queued of store.list({ statuses: ["queued"], includeCleared: true })) {
      const key = queued.worker ?? modelKey(queued);
      if (queued.worker) {
        if ((perWorker.get(key) ?? 0) >= this.capacity(key)) continue;
      } else if (total >= this.limits.maxConcurrentTotal || (perModel.get(key) ?? 0) >= this.limits.maxConcurrentPerModel) continue;
      const next = store.get(queued.id);
      if (!next) continue;
      const now = clock.now();
      transition(next, "running", now);
      next.promptedAt = now;
      next.startedAt = now;
      next.progress.lastActivityAt = now;
      store.save(next);
      this.life.ownership.take(next.id); // the instance that starts a child drives it
      store.appendEvent({ taskId: next.id, at: now, kind: "started" });
      if (queued.worker) add(perWorker, key);
      else (add(perModel, key), total++);
      claimed.push(next);
    }
    return claimed;
  }

  /** Starts claimed tasks whose failure nobody is waiting to hear: a failure is settled and notified. */
  async startAll(claimed: Task[]): Promise<void> {
    await Promise.all(claimed.map((task) => this.start(task).catch(() => undefined)));
  }

  /**
   * Prompts a claimed task's child. On failure the task is settled as error and the error is
   * thrown; `notify: false` when the caller reports the failure itself (a launch's tool answer).
   */
  async start(task: Task, { notify = true } = {}): Promise<void> {
    this.life.progress.track(task.id, task.progress);
    try {
      await this.ctx.host.prompt({ sessionID: task.id, text: await this.firstPrompt(task), agent: task.agent, model: task.model });
      this.life.callHook("started", () => this.life.hooks.started?.(task));
    } catch (error) {
      this.life.settleSafely(task.id, "error", { error: `Could not start: ${errorMessage(error)}` }, { notify });
      throw error;
    }
  }
}

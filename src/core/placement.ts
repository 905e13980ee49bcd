import type { ModelRef, Task } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import type { LaunchInput } from "./task-launcher.ts";

/** Where a new task runs: a worker's name, or undefined for this OpenCode. */
export type Choice = { worker?: string; /** Call once the task holds its slot (or did not launch). */ release(): void };

/**
 * Other OpenCode servers that may run children (workers). The core asks it where a task goes and
 * how many a worker runs at once; the session-scoped host calls reach the right server through
 * the routing host the core is given. Without one every task runs here.
 */
export type Placement = {
  /**
   * `requested`: a worker name, "local" or "auto". `active`: tasks running now; `waiting`: queued
   * ones. Throws a TaskError naming the fix for an unknown or unhealthy worker.
   */
  choose(requested: string, model: ModelRef, active: TaskSummary[], local: { perModel: number; total: number }, waiting: TaskSummary[]): Choice;
  /** Creates the child's session on the worker (it has no copy of the parent). */
  createSession(worker: string, title: string): Promise<{ id: string }>;
  /** A fork onto a worker: a new session there holding a copy of the parent's messages. */
  fork(worker: string, input: LaunchInput & { title: string }): Promise<string>;
  /** Children the worker runs at once; 0 for a worker no longer configured. */
  capacity(worker: string): number;
};

/** Where a task runs, for answers and lists. */
export function whereText(task: Pick<Task, "worker">): string {
  return task.worker ? `worker ${task.worker}` : "local";
}

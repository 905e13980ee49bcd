import type { Task } from "../core/task.ts";
import type { TaskFilter } from "../core/task-store.ts";
import { copyTask } from "./copy-task.ts";

/**
 * One project's tasks held in memory so that listing costs copies rather than decoding every
 * row again (SQLite decoding 10,000 rows of ~23 columns takes 100+ ms). Insertion order is the
 * tasks table's rowid order, which breaks createdAt ties exactly as the SQL ordering does.
 */
export class TaskCache {
  private readonly tasks = new Map<string, Task>();

  /** `tasks` must come in `created_at, rowid` order. */
  constructor(tasks: Task[]) {
    for (const task of tasks) this.tasks.set(task.id, task);
  }

  put(task: Task): void {
    this.tasks.set(task.id, copyTask(task));
  }

  delete(id: string): void {
    this.tasks.delete(id);
  }

  list(filter: TaskFilter): Task[] {
    const { parentSessionID, statuses, includeCleared } = filter;
    const matches = [...this.tasks.values()].filter(
      (t) =>
        (!parentSessionID || t.parentSessionID === parentSessionID) &&
        (!statuses || statuses.includes(t.status)) &&
        (includeCleared || t.clearedAt === undefined),
    );
    return matches.sort((a, b) => a.createdAt - b.createdAt).map(copyTask);
  }
}

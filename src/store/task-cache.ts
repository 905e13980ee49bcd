import type { Task } from "../core/task.ts";
import type { TaskFilter } from "../core/task-store.ts";
import { summaryOf, type TaskSummary } from "../core/task-summary.ts";
import { copyTask } from "./copy-task.ts";

/**
 * One project's task summaries held in memory so that listing costs copies rather than decoding
 * every row again (SQLite decoding 10,000 rows of ~23 columns takes 100+ ms). Summaries only: a
 * settled task's prompt and result stay on disk, so the cache grows by a bounded size per task.
 * Insertion order is the tasks table's rowid order, which breaks createdAt ties exactly as the SQL
 * ordering does.
 */
export class TaskCache {
  private readonly tasks = new Map<string, TaskSummary>();

  /** `tasks` must come in `created_at, rowid` order. */
  constructor(tasks: TaskSummary[]) {
    for (const task of tasks) this.tasks.set(task.id, task);
  }

  /** Keeps a copy of the task's summary (a Task may be passed: its large texts are left out). */
  put(task: TaskSummary & Partial<Task>): void {
    this.tasks.set(task.id, copyTask(summaryOf(task)));
  }

  delete(id: string): void {
    this.tasks.delete(id);
  }

  /** Drops every task whose id is not in `ids` (the ids still in the table). */
  retainOnly(ids: ReadonlySet<string>): void {
    for (const id of this.tasks.keys()) if (!ids.has(id)) this.tasks.delete(id);
  }

  list(filter: TaskFilter): TaskSummary[] {
    const { parentSessionID, statuses, includeCleared } = filter;
    // A loop rather than filter over a spread: listing runs on every event, and copying 10,000
    // references into a throwaway array each time shows up as collector pauses.
    const matches: TaskSummary[] = [];
    for (const t of this.tasks.values()) {
      if (parentSessionID && t.parentSessionID !== parentSessionID) continue;
      if (statuses && !statuses.includes(t.status)) continue;
      if (!includeCleared && t.clearedAt !== undefined) continue;
      matches.push(t);
    }
    return matches.sort((a, b) => a.createdAt - b.createdAt).map(copyTask);
  }
}

import { isSettled, type Task } from "../core/task.ts";
import type { TaskFilter } from "../core/task-store.ts";
import { summaryOf, type TaskSummary } from "../core/task-summary.ts";
import { copyTask } from "./copy-task.ts";

/** `rank` is the order of first insertion: it breaks createdAt ties, as rowid does in SQL. */
type Entry = { task: TaskSummary; rank: number };

/**
 * One project's task summaries held in memory so that listing costs copies rather than decoding
 * every row again (SQLite decoding 10,000 rows of ~23 columns takes 100+ ms). Summaries only: a
 * settled task's prompt and result stay on disk, so the cache grows by a bounded size per task.
 * The unsettled tasks and each parent's tasks are indexed: the core lists them on every event,
 * and must not walk every task of the retention period to find the few that run.
 */
export class TaskCache {
  private readonly entries = new Map<string, Entry>();
  private readonly unsettled = new Set<string>();
  private readonly byParent = new Map<string, Set<string>>();
  private nextRank = 0;

  /** `tasks` must come in `created_at, rowid` order. */
  constructor(tasks: TaskSummary[]) {
    for (const task of tasks) this.set(task);
  }

  /** Keeps a copy of the task's summary (a Task may be passed: its large texts are left out). */
  put(task: TaskSummary & Partial<Task>): void {
    this.set(copyTask(summaryOf(task)));
  }

  delete(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.unindex(entry.task);
    this.entries.delete(id);
  }

  /** Drops every task whose id is not in `ids` (the ids still in the table). */
  retainOnly(ids: ReadonlySet<string>): void {
    for (const id of this.entries.keys()) if (!ids.has(id)) this.delete(id);
  }

  list(filter: TaskFilter): TaskSummary[] {
    const { parentSessionID, statuses, includeCleared } = filter;
    const matches: Entry[] = [];
    for (const id of this.candidates(filter)) {
      const entry = this.entries.get(id)!;
      const t = entry.task;
      if (parentSessionID && t.parentSessionID !== parentSessionID) continue;
      if (statuses && !statuses.includes(t.status)) continue;
      if (!includeCleared && t.clearedAt !== undefined) continue;
      matches.push(entry);
    }
    return matches.sort((a, b) => a.task.createdAt - b.task.createdAt || a.rank - b.rank).map((entry) => copyTask(entry.task));
  }

  /** The smallest set of ids sure to hold every match. */
  private candidates({ parentSessionID, statuses }: TaskFilter): Iterable<string> {
    if (statuses && !statuses.some(isSettled)) return this.unsettled;
    if (parentSessionID) return this.byParent.get(parentSessionID) ?? [];
    return this.entries.keys();
  }

  private set(task: TaskSummary): void {
    const old = this.entries.get(task.id);
    if (old) this.unindex(old.task);
    this.entries.set(task.id, { task, rank: old?.rank ?? this.nextRank++ });
    if (!isSettled(task.status)) this.unsettled.add(task.id);
    let siblings = this.byParent.get(task.parentSessionID);
    if (!siblings) this.byParent.set(task.parentSessionID, (siblings = new Set()));
    siblings.add(task.id);
  }

  private unindex(task: TaskSummary): void {
    this.unsettled.delete(task.id);
    const siblings = this.byParent.get(task.parentSessionID);
    siblings?.delete(task.id);
    if (siblings?.size === 0) this.byParent.delete(task.parentSessionID);
  }
}

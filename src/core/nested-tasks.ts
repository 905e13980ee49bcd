import { UNSETTLED_STATUSES } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import type { TaskStore } from "./task-store.ts";

/**
 * A child may launch background tasks of its own (up to maxDepth). Its task is done only when
 * those are: each of them waits for its own in turn, so a task's open children are enough to
 * know whether anything below it still runs.
 */
export function openChildTasks(store: TaskStore, taskId: string): TaskSummary[] {
  return store.list({ parentSessionID: taskId, statuses: UNSETTLED_STATUSES, includeCleared: true });
}

/**
 * Why an idle child with an answer is not done yet: tasks of its own still run, or one of their
 * notices has not reached it (once it has, the child answers again, and that answer counts).
 */
export function waitingReason(store: TaskStore, taskId: string): string | undefined {
  const open = openChildTasks(store, taskId);
  if (open.length > 0) return waitingText(open);
  if (store.pendingNotifications(taskId).length > 0) return "waiting for the news of its own background tasks to reach it";
  return undefined;
}

/** `waiting for 2 background tasks of its own (ses_a, ses_b)` */
export function waitingText(open: TaskSummary[]): string {
  const n = open.length;
  return `waiting for ${n} background task${n === 1 ? "" : "s"} of its own (${open.map((t) => t.id).join(", ")})`;
}

/** The unsettled tasks below a task, deepest first: the order a cascade cancels them in. */
export function openDescendants(store: TaskStore, taskId: string, seen = new Set<string>([taskId])): TaskSummary[] {
  const below: TaskSummary[] = [];
  for (const child of openChildTasks(store, taskId)) {
    if (seen.has(child.id)) continue; // a session cannot be its own ancestor; guard against a bad row anyway
    seen.add(child.id);
    below.push(...openDescendants(store, child.id, seen), child);
  }
  return below;
}

/** Every task below a task (settled ones too), with its depth: the tree background_list and the dashboard show. */
export function taskTree(store: TaskStore, taskId: string, depth = 1, seen = new Set<string>([taskId])): { task: TaskSummary; depth: number }[] {
  const rows: { task: TaskSummary; depth: number }[] = [];
  for (const child of store.list({ parentSessionID: taskId, includeCleared: false })) {
    if (seen.has(child.id)) continue;
    seen.add(child.id);
    rows.push({ task: child, depth }, ...taskTree(store, child.id, depth + 1, seen));
  }
  return rows;
}

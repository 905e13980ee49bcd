import type { Task } from "../core/task.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import { formatDuration } from "../core/format-duration.ts";
import { isBudgetStop } from "../core/budget.ts";
import { formatBudget } from "../cost/budget-text.ts";

export function marks(task: TaskSummary): string {
  return (task.isForked ? " (forked)" : "") + (task.resumeCount > 0 ? " (resumed)" : "") + (task.worker ? ` (on worker ${task.worker})` : "") +
    (task.worktree ? ` (branch ${task.worktree.branch}${gone(task.worktree)})` : "");
}

const GONE = { merge: "merged", discard: "discarded", clear: "removed" } as const;

/** After background_merge or background_clear: what became of the branch, so it is not offered as if still there. */
function gone(wt: NonNullable<TaskSummary["worktree"]>): string {
  if (!wt.removed) return "";
  return wt.removed.branchKept ? ", worktree removed, branch kept" : `, ${GONE[wt.removed.by]}`;
}

export function elapsed(task: TaskSummary, now: number): string {
  return formatDuration((task.settledAt ?? now) - task.createdAt);
}

export function progressLine(task: TaskSummary, now: number): string {
  if (task.status === "queued") return task.worker ? `waiting for a free slot on worker ${task.worker} (its capacity)` : "waiting for a free slot (maxConcurrentPerModel / maxConcurrentTotal)";
  const { toolCalls, lastTools, lastActivityAt, retry, permission, note } = task.progress;
  const tools = lastTools.length > 0 ? `, last: ${lastTools.join(", ")}` : "";
  const parts = [`${toolCalls} tool call${toolCalls === 1 ? "" : "s"}${tools}; last activity ${formatDuration(now - lastActivityAt)} ago`];
  if (retry) parts.push(`model call failed, retry attempt ${retry.attempt}${retry.nextAt ? ` in ${formatDuration(Math.max(0, retry.nextAt - now))}` : ""}: ${retry.message}`);
  if (permission) parts.push(`WAITING FOR PERMISSION: ${permission} (answer it in the child session)`);
  if (note) parts.push(note);
  return parts.join("; ");
}

/** One line of background_list. */
export function listLine(task: TaskSummary, now: number): string {
  return `${task.id}${marks(task)}  ${task.status}  ${elapsed(task, now)}  ${task.description}  [${progressLine(task, now)}]`;
}

/** background_output's answer for one task; `evidence` is the evidence block. */
export function outputBlock(task: Task, now: number, extra: { evidence?: string; spent?: string } = {}): string {
  const lines = [
    `Task ${task.id}${marks(task)}: ${task.description}`,
    `Status: ${task.status} (${elapsed(task, now)}, agent ${task.agent}, batch ${task.batchId}, runs ${task.worker ? `on worker ${task.worker}` : task.worktree ? `in worktree ${task.worktree.path}${task.worktree.removed ? " (removed)" : ""}` : "here"})`,
    `Progress: ${progressLine(task, now)}`,
  ];
  if (extra.spent) lines.push(`Spent: ${extra.spent} (with the tasks it launched)`);
  if (task.budget) lines.push(`Budget: ${formatBudget(task.budget)} (with the tasks it launches)`);
  if (task.status === "completed") lines.push("Result:", task.result ?? "");
  if (task.status === "error") lines.push(`Error: ${task.error ?? "unknown error"}`);
  if (task.status === "error" && isBudgetStop(task.error) && task.result) lines.push("Last answer:", task.result);
  if (task.status === "cancelled") lines.push(task.error ? `Cancelled: ${task.error}` : "Cancelled.");
  if (extra.evidence) lines.push(extra.evidence);
  if (task.worktree?.changes) lines.push(task.worktree.changes);
  return lines.join("\n");
}

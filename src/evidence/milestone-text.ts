import type { Task } from "../core/task.ts";
import { formatDuration } from "../core/format-duration.ts";
import { noticeLine } from "../core/notice-line.ts";

export type Milestone = "started" | "evidence_verified" | "completed" | "error" | "cancelled";

/**
 * A short notice for the parent; it never starts a turn, and says so to the parent's model. Same tag
 * as a notification (the outbox marks it the same way), told apart by its `milestone` attribute.
 */
export function milestoneText(task: Task, milestone: Milestone, detail: string): string {
  return `<background-task-notification task_id="${task.id}" milestone="${milestone}">\n` +
    `Background task ${task.id} "${task.description}": ${detail} (a milestone notice; no reply needed)\n` +
    `</background-task-notification>`;
}

const SYMBOL: Record<Milestone, string> = { started: "▸", evidence_verified: "☑", completed: "✓", error: "✗", cancelled: "⊘" };

/** The line a person sees for a milestone: `▸ find flaky tests · started`. */
export function milestoneLine(task: Task, milestone: Milestone, detail: string): string {
  return noticeLine(SYMBOL[milestone], task.description, detail);
}

export function startedDetail(task: Task): string {
  const waited = (task.startedAt ?? task.createdAt) - task.createdAt;
  return waited >= 1000 ? `started after ${formatDuration(waited)} in the queue.` : "started.";
}

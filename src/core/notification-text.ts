import type { Task } from "./task.ts";
import { formatDuration } from "./format-duration.ts";
import { isBudgetStop } from "./budget.ts";

/** What a model is told of a task stopped at its budget: more spending is the user's call, not its own. */
export const BUDGET_STOP_ADVICE = "It stopped at its budget: ask the user whether to resume it with a larger budget (a larger budget asks the user).";

/** The message put in the parent session when a task settles. */
export function notificationText(task: Task, resultCap: number): string {
  const duration = formatDuration((task.settledAt ?? task.createdAt) - task.createdAt);
  const header = `Background task ${task.id} "${task.description}" ${task.status} after ${duration}` +
    (task.resumeCount > 0 ? ` (resumed ${task.resumeCount}x)` : "") + (task.spent ? `, spent ${task.spent}` : "") + ".";
  const lines = [`<background-task-notification task_id="${task.id}" status="${task.status}">`, header];
  if (task.status === "completed") lines.push("Result:", capped(task.result ?? "", resultCap, task.id));
  if (task.status === "error") lines.push(`Error: ${task.error ?? "unknown error"}`);
  // Stopped at its budget: what it had so far is its result; the user decides whether it goes on.
  if (task.status === "error" && isBudgetStop(task.error) && task.result) lines.push("Last answer:", capped(task.result, resultCap, task.id));
  if (task.status === "error" && isBudgetStop(task.error)) lines.push(BUDGET_STOP_ADVICE);
  if (task.status === "cancelled") lines.push(task.error ? `Reason: ${task.error}` : "It was cancelled.");
  if (task.evidence) lines.push(task.evidence);
  if (task.worktree?.changes) lines.push(task.worktree.changes);
  lines.push("</background-task-notification>");
  return lines.join("\n");
}

/** A settled task whose child answered again (a later notice woke it): the new answer, for the parent. */
export function followUpText(task: Task, resultCap: number): string {
  return [
    `<background-task-notification task_id="${task.id}" status="${task.status}" follow_up="answered again">`,
    `Background task ${task.id} "${task.description}" answered again after it was reported ${task.status} (a later notice woke its child). Its new answer replaces the earlier result.`,
    "Result:",
    capped(task.result ?? "", resultCap, task.id),
    "</background-task-notification>",
  ].join("\n");
}

function capped(text: string, cap: number, taskId: string): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}\n[... ${text.length - cap} more characters: call background_output with task_id "${taskId}" for the full result]`;
}

/** Every notice the plugin sends a session starts with this tag (they arrive as user messages). */
export const NOTIFICATION_TAG = "<background-task-notification";
const TAG = NOTIFICATION_TAG;

/** The stable marker of one outbox notification in the text the parent stores. */
export function notificationMarker(notificationId: string): string {
  return `key="${notificationId.replaceAll("&", "&amp;").replaceAll('"', "&quot;")}"`;
}

/**
 * The text as sent: the notification's marker as an attribute of its tag (a text without the
 * tag is wrapped in one), so that after a crash it can be found in the parent and not sent twice.
 */
export function withMarker(text: string, notificationId: string): string {
  const marker = notificationMarker(notificationId);
  if (text.includes(marker)) return text;
  const at = text.indexOf(TAG);
  if (at < 0) return `${TAG} ${marker}>\n${text}\n</background-task-notification>`;
  const end = at + TAG.length;
  return `${text.slice(0, end)} ${marker}${text.slice(end)}`;
}

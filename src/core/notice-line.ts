import type { Task } from "./task.ts";
import { formatDuration } from "./format-duration.ts";

/**
 * Every notice the plugin puts in a session is one user message with two text parts: this line
 * for the person (the TUI shows it) and the tagged payload for the model (sent synthetic, which
 * the TUI does not show). The line is plain text: no markup, no delivery key, one line.
 */
export const NOTICE_LINE_MAX = 160;

/** `symbol first · second · …`, on one line, cut with an ellipsis at NOTICE_LINE_MAX. */
export function noticeLine(symbol: string, ...segments: (string | undefined)[]): string {
  const shown = segments.map((s) => oneLine(s ?? "")).filter((s) => s !== "");
  return cut(`${symbol} ${shown.join(" · ")}`);
}

/** The line for a task's settle: `✓ find flaky tests · 4s · the result…`, `✗ … · the error`, `⊘ … · cancelled`. */
export function taskNoticeLine(task: Task): string {
  const duration = formatDuration((task.settledAt ?? task.createdAt) - task.createdAt);
  // The evidence block says so when what the child did contradicts its answer: a person should see that.
  const doubt = task.evidence?.includes("WARNING:") ? "⚠ the evidence contradicts the answer" : undefined;
  if (task.status === "completed") return noticeLine("✓", task.description, duration, doubt, task.result);
  if (task.status === "error") return noticeLine("✗", task.description, duration, task.error ?? "unknown error");
  if (task.status === "cancelled") return noticeLine("⊘", task.description, "cancelled", task.error);
  return noticeLine("•", task.description, task.status);
}

/** The line for a settled task's new answer: `↻ find flaky tests · ses_… answered again · the answer…`. */
export function followUpLine(task: Task): string {
  return noticeLine("↻", task.description, `${task.id} answered again`, task.result);
}

/** The line for a task told to continue after a restart. */
export function interruptedLine(task: Task): string {
  return noticeLine("↻", task.description, "interrupted by an OpenCode restart; told to continue");
}

/** A line made from a payload alone (a notice queued without a line of its own): its words without the tags. */
export function fallbackLine(text: string): string {
  return cut(oneLine(text));
}

const TAG = /<\/?[a-z][\w-]*(\s[^>]*)?>/gi;

/** Whitespace collapsed, tags (a notice's own, or markup in a result) dropped, no closing period. */
function oneLine(text: string): string {
  return text.replace(TAG, " ").replace(/\s+/g, " ").trim().replace(/\.$/, "");
}

function cut(line: string): string {
  return line.length > NOTICE_LINE_MAX ? `${line.slice(0, NOTICE_LINE_MAX - 1)}…` : line;
}

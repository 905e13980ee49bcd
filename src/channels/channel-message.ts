/**
 * A finished run as the channels see it (a ChannelNotice), and the text helpers the formats share.
 * Each format's request is in formats/<format>.ts.
 */

/** Characters of a run's result a channel gets at most (formats with smaller limits cut further). */
export const RESULT_CAP = 4000;

export type ChannelNotice = {
  automation: { id: string; title: string };
  run: { no: number; id: number };
  status: "completed" | "error" | "cancelled";
  /** Why the run happened, in words: "cron 0 9 * * 1-5, planned …", "file: src/a.ts changed". */
  trigger: string;
  /** One line: the result's first line, or the error. */
  summary: string;
  /** The run's result (or error), capped at RESULT_CAP characters. */
  result: string;
  taskId?: string;
  /** isolation "worktree": the branch the run left its changes on (the result's first line says so). */
  branch?: string;
  /** The run's page on the dashboard, when one is served. */
  dashboardUrl?: string;
};

export const WORDS = { completed: "completed", error: "failed", cancelled: "was cancelled" } as const;
export const EMOJI = { completed: "✅", error: "❌", cancelled: "⏹️" } as const;

/** The result a channel shows: an isolated run's branch first, in one short line, so no format's cut drops it. */
export function resultWithBranch(result: string, branch: string | undefined): string {
  return branch ? `Changes on branch ${branch}.\n${result}` : result;
}

/** "Nightly tests run #3 failed". */
export function headline(n: ChannelNotice): string {
  return `${n.automation.title} run #${n.run.no} ${WORDS[n.status]}`;
}

/** Cuts to at most `max` UTF-16 units, never inside a surrogate pair, and says how much was left out. */
export function capChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `… [${text.length - max} more characters]`;
  if (max <= marker.length) return wholeChars(text, max);
  return wholeChars(text, max - marker.length) + marker;
}

function wholeChars(text: string, max: number): string {
  let cut = text.slice(0, max);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut;
}

/** Cuts to at most `maxBytes` of UTF-8, never inside a character, and marks the cut. */
export function capBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const marker = "\n[…]";
  // A character cut in half decodes as U+FFFD: drop it.
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes - Buffer.byteLength(marker)).toString("utf8").replace(/\uFFFD$/, "");
  return cut + marker;
}

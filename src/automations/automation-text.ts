import { EVENT_KINDS, type Automation, type Run, type Trigger } from "./automation.ts";

const isEventKind = (kind: string) => (EVENT_KINDS as readonly string[]).includes(kind);
import { describeTrigger } from "./trigger-spec.ts";
import type { RunOutcome } from "./notify-policy.ts";
import type { Step } from "./step-spec.ts";
import { stepsCompact } from "./step-text.ts";
import { noticeLine } from "../core/notice-line.ts";
import { isBudgetStop } from "../core/budget.ts";

const iso = (ms: number | undefined) => (ms === undefined ? "-" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z"));

export function firstLine(text: string | undefined, max = 160): string {
  const line = (text ?? "").trim().split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Why a run happened, in a few words: "interval every 2s, planned 2026-...". */
export function firedByText(run: Pick<Run, "firedBy" | "plannedAt" | "triggerId" | "eventSummary">, trigger?: Trigger): string {
  if (run.firedBy === "manual") return "run now (task_run)";
  if (run.eventSummary !== undefined) return `${run.firedBy}: ${run.eventSummary}`;
  if (run.firedBy === "catch_up") return `catch-up of missed occurrences${trigger ? ` of ${describeTrigger(trigger.spec)}` : ""}`;
  const planned = run.plannedAt === undefined ? "" : `, planned ${iso(run.plannedAt)}`;
  return `${trigger ? describeTrigger(trigger.spec) : `trigger ${run.triggerId}`}${planned}`;
}

/**
 * A skipped row's status in words: `skipped (overlap)`, or for a streak of consecutive skips
 * `skipped 1,203 times until 2026-11-27T14:32:10Z (daily budget reached ($2.03 of $2.00))`
 * (it began at the row's time; the reason is the latest firing's).
 */
export function skippedText(run: Pick<Run, "skipReason" | "skipCount" | "endedAt" | "createdAt">): string {
  const count = run.skipCount ?? 1;
  const streak = count > 1 ? ` ${count.toLocaleString("en-US")} times until ${iso(run.endedAt ?? run.createdAt)}` : "";
  return `skipped${streak} (${run.skipReason ?? "?"})`;
}

/** The lines put before the prompt of every run: the automation, and the event that fired it. */
export function runContextLine(a: Automation, run: Run, trigger: Trigger | undefined, note?: string): string {
  const head = `[Automation "${a.title}" (${a.id}), run #${run.runNo}, fired by ${run.eventSummary !== undefined && trigger ? describeTrigger(trigger.spec) : firedByText(run, trigger)}${note ? `; ${note}` : ""}]`;
  if (run.eventSummary === undefined) return head;
  const folded = run.eventFolded ? ` (${run.eventFolded} earlier event(s) arrived while a run was going and were folded into this one)` : "";
  return [head, `[Event: ${run.eventSummary}${folded}]`, ...(run.eventData ? [run.eventData] : [])].join("\n");
}

export function runNotificationText(a: Automation, run: Run, outcome: RunOutcome, cap: number, extra?: string): string {
  // A run stopped at its budget hands back the last answer its child had, as a task does.
  const lastAnswer = isBudgetStop(outcome.error) && outcome.result?.trim() ? `\nLast answer:\n${outcome.result.trim()}` : "";
  const body = outcome.status === "completed" ? (outcome.result ?? "").trim() : `Error: ${outcome.error ?? outcome.status}${lastAnswer}`;
  const shown = body.length > cap ? `${body.slice(0, cap)}\n[... ${body.length - cap} more characters]` : body;
  return [
    `<automation-run automation="${a.id}" run="${run.runNo}" status="${outcome.status}">`,
    `Automation "${a.title}" run #${run.runNo} (${firedByText(run)}) ${outcome.status}:`,
    shown,
    ...(run.branch ? [`Its changes are on branch ${run.branch} (git merge ${run.branch} to take them, git branch -D ${run.branch} to drop them).`] : []),
    ...(extra ? [extra] : []),
    "</automation-run>",
  ].join("\n");
}

/** The line a person sees for a run: `✓ automation "main digest" · run #3 · the result…`. */
export function runNoticeLine(a: Pick<Automation, "title">, run: Pick<Run, "runNo" | "branch">, outcome: RunOutcome): string {
  const symbol = outcome.status === "completed" ? "✓" : outcome.status === "cancelled" ? "⊘" : "✗";
  const what = outcome.status === "completed" ? outcome.result : outcome.status === "cancelled" ? "cancelled" : (outcome.error ?? outcome.status);
  return noticeLine(symbol, `automation "${a.title}"`, `run #${run.runNo}`, run.branch && `branch ${run.branch}`, what);
}

/** The line a person sees for a pause: `⏸ automation "main digest" paused after 2 failures`. */
export function pausedLine(a: Pick<Automation, "title" | "consecutiveFailures">): string {
  return noticeLine("⏸", `automation "${a.title}" paused after ${a.consecutiveFailures} failures`);
}

export function pausedText(a: Automation, lastError: string): string {
  return [
    `<automation-paused automation="${a.id}">`,
    `Automation "${a.title}" (${a.id}) is now PAUSED after ${a.consecutiveFailures} consecutive failed runs. Last error: ${firstLine(lastError, 500)}. Resume it with task_update { id: "${a.id}", enabled: true } once the cause is fixed.`,
    "</automation-paused>",
  ].join("\n");
}

/** enabled / paused (why) / done / report-to session gone. */
export function stateText(a: Automation): string {
  if (a.proposal) return "proposed, waiting for the user's approval";
  const state = a.doneAt !== undefined ? `done (max_runs ${a.maxRuns} reached)` : a.enabled ? "enabled" : `paused${a.pausedReason ? ` (${a.pausedReason})` : ""}`;
  return a.reportToGoneAt !== undefined ? `${state}; report-to session gone` : state;
}

/** A trigger in a list: its words, then when it fires next (schedules) or what its source says (events). */
export function triggerLine(t: Trigger, waiting?: number): string {
  if (t.nextAt !== undefined || !isEventKind(t.spec.kind)) return `${describeTrigger(t.spec)}, next ${iso(t.nextAt)}`;
  const extras = [...(t.note ? [t.note] : []), ...(waiting ? [`${waiting} webhook deliveries wait for an OpenCode process of this project`] : [])];
  return `${describeTrigger(t.spec)}${extras.length ? ` (${extras.join("; ")})` : ""}`;
}

export function nextRunText(triggers: Trigger[], a: Automation): string {
  if (!a.enabled || a.doneAt !== undefined) return "-";
  const next = Math.min(...triggers.map((t) => t.nextAt ?? Infinity));
  return Number.isFinite(next) ? iso(next) : triggers.length === 0 ? "only on task_run" : "-";
}

export function runLine(run: Run, triggers: Trigger[]): string {
  const trigger = triggers.find((t) => t.id === run.triggerId);
  const when = iso(run.startedAt ?? run.plannedAt ?? run.createdAt);
  const duration = run.startedAt !== undefined && run.endedAt !== undefined ? ` ${Math.round((run.endedAt - run.startedAt) / 100) / 10}s` : "";
  if (run.status === "missed") {
    return `- ${iso(run.plannedAt)} missed ${run.missedCount} occurrence(s) of ${trigger ? describeTrigger(trigger.spec) : "a trigger"} until ${iso(run.missedUntil)} (OpenCode was not running)`;
  }
  // A streak's firings each had their own planned time: the trigger is named without one.
  if (run.status === "skipped") return `- ${when} ${skippedText(run)} ${firedByText((run.skipCount ?? 1) > 1 ? { ...run, plannedAt: undefined } : run, trigger)}`;
  const head = `- ${when} run #${run.runNo} ${run.status}${duration}, ${firedByText(run, trigger)}`;
  const told = run.notified === undefined ? "" : run.notified ? "; notified" : `; not notified (${run.notifyNote})`;
  const steps = run.steps?.length ? ` [steps: ${stepsCompact(run.steps)}]` : "";
  const branch = run.branch ? `; branch ${run.branch}` : "";
  return `${head}${told}${branch}${run.summary ? `: ${firstLine(run.summary, 120)}` : ""}${steps}`;
}

/** A definition's steps, one line each: `- test: \`npm test\` (timeout 10m, continue_on_error)`. */
export function stepDefinitionLines(steps: Step[]): string[] {
  return steps.map((s) => `- ${s.name}: \`${s.run}\` (timeout ${s.timeout ?? "5m"}${s.retries ? `, retries ${s.retries}, retry_delay ${s.retryDelay ?? "5s"}` : ""}${s.continueOnError ? ", continue_on_error" : ""})`);
}

export { iso as isoTime };

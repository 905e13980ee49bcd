import type { Automation, Trigger, TriggerSpec } from "../automations/automation.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { kindOf } from "../triggers/kinds/registry.ts";
import type { TriggerKind } from "../triggers/kinds/trigger-kind.ts";
import { budgetText } from "../automations/automation-budget.ts";

/** What isolation "worktree" means for an automation's runs, wherever a definition is shown for approval. */
export const ISOLATION_WORDS = "each run in a fresh git worktree of the default branch, on its own branch (none left when it changed nothing); your checkout is not touched";

/**
 * One line of a proposal's full definition, as the dashboard and the CLI show it before the user
 * approves: a label, words about it, and the exact texts that run or leave the machine (commands,
 * the prompt, file paths, channel names). Exact texts are never cut; the views make their
 * whitespace and invisible characters visible.
 */
export type DefinitionRow = { label: string; text?: string; exact?: string[] };

/** Every field that runs or leaves the machine, in full, in a fixed order. */
export function definitionRows(a: Automation, triggers: Pick<Trigger, "spec">[]): DefinitionRow[] {
  const rows: DefinitionRow[] = [];
  if (triggers.length === 0) rows.push({ label: "Triggers", text: "none: it runs only when asked (task_run, Run now)" });
  triggers.forEach((t, i) => rows.push({ label: `Trigger ${i + 1}`, ...triggerInFull(t.spec) }));
  rows.push(a.prompt ? { label: "Prompt", ...promptWhenText(a), exact: [a.prompt] } : { label: "Prompt", text: "none: steps only, no model runs" });
  rows.push({ label: "Agent", exact: [a.agent] });
  rows.push({ label: "Model", ...(a.model ? { exact: [`${a.model.providerID}/${a.model.modelID}`] } : { text: "the agent's default" }) });
  rows.push({ label: "Runs on", text: workerText(a.worker) });
  rows.push({ label: "Isolation", text: a.isolation === "worktree" ? `worktree: ${ISOLATION_WORDS}` : "none: runs work in your checkout" });
  rows.push({ label: "Budget", text: a.budget ? budgetText(a.budget) : "none: no limit of its own (the option dailyBudgetUsd still applies)" });
  (a.steps ?? []).forEach((s, i) => rows.push({
    label: `Step ${i + 1}`,
    text: `${s.name}: sh -c in the project, timeout ${s.timeout ?? "5m"}${s.retries ? `, tried ${s.retries} more time(s) ${s.retryDelay ?? "5s"} apart when it fails` : ""}${s.continueOnError ? ", a failure does not stop the run" : ""}`,
    exact: [s.run],
  }));
  if (a.expect?.command) rows.push({ label: "Expect command", text: "sh -c in the project after each run; the run fails unless it exits 0", exact: [a.expect.command] });
  if (a.expect?.files?.length) rows.push({ label: "Expect files", text: "must exist and not be empty after each run", exact: a.expect.files });
  rows.push({ label: "Channels", ...(a.channels?.length ? { text: "hear about runs (outside OpenCode)", exact: a.channels } : { text: "none" }) });
  rows.push({ label: "Report", text: a.report === "channels" ? "to the channels only" : `to session ${a.reportTo}${a.channels?.length ? " and the channels" : ""}` });
  rows.push({ label: "Notify", text: a.notify });
  rows.push({ label: "Runs", text: runsText(a) });
  return rows;
}

/** With steps, when the prompt (the model) runs. */
function promptWhenText(a: Automation): { text?: string } {
  if (!a.steps?.length) return {};
  return { text: a.promptWhen === "always" ? "runs after the steps, every run (prompt_when always)" : "runs only when a step fails (prompt_when failure); otherwise no model runs" };
}

function workerText(worker: string | undefined): string {
  if (!worker) return "this OpenCode (local)";
  return worker === "auto" ? "auto: this OpenCode, or the healthy worker with the most free capacity when its slots are full" : `worker ${worker}`;
}

function runsText(a: Automation): string {
  const session = a.sessionMode === "continue" ? "every run continues one child session" : "a fresh child session per run";
  const max = a.maxRuns !== undefined ? `, at most ${a.maxRuns} run${a.maxRuns === 1 ? "" : "s"}` : "";
  return `${session}${max}; overlapping runs: ${a.overlap}; missed while off: ${a.catchUp}`;
}

/** A trigger with every field that decides what runs and when; a command trigger's command whole. */
export function triggerInFull(spec: TriggerSpec): Omit<DefinitionRow, "label"> {
  const kind = kindOf(spec) as TriggerKind;
  return kind.inFull?.(spec) ?? { text: describeTrigger(spec) };
}

/**
 * Characters that do not show, or show as something else: controls (ANSI escapes, carriage
 * return), bidirectional overrides, zero-width and no-break spaces. Views write them as \u{…}.
 */
export const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u00a0\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb]/gu;

export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

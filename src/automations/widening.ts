import type { Automation } from "./automation.ts";
import { budgetText, type AutomationBudget } from "./automation-budget.ts";
import type { AutomationFields } from "./automation-catalog.ts";
import type { ModelRef } from "../core/task.ts";
import type { ApprovedDefinition } from "./approved-version.ts";
import { canonicalJson } from "./approved-version.ts";
import { describeTrigger } from "./trigger-spec.ts";

/**
 * What a change adds to what an approved automation does, one line each, as the user is shown
 * it before saying yes again. Empty: the change only narrows (pause, fewer runs, quieter notify,
 * a removed channel or step, a lower or added spending limit) and asks nothing.
 */
export function wideningChanges(current: Automation, change: Partial<AutomationFields>): string[] {
  const lines: string[] = [];
  if (change.prompt && change.prompt !== current.prompt) lines.push(`prompt: ${change.prompt}`);
  if (change.agent !== undefined && change.agent !== current.agent) lines.push(`agent: ${current.agent} → ${change.agent}`);
  if (change.model && modelText(change.model) !== modelText(current.model)) lines.push(`model: ${modelText(current.model)} → ${modelText(change.model)}`);
  if (change.worker !== undefined && change.worker !== (current.worker ?? "local")) lines.push(`worker: ${current.worker ?? "local"} → ${change.worker}`);
  const channels = (change.channels ?? []).filter((c) => !(current.channels ?? []).includes(c));
  if (channels.length > 0) lines.push(`channels: + ${channels.join(", ")}`);
  if (change.report !== undefined && change.report !== (current.report ?? "session")) lines.push(`report: ${current.report ?? "session"} → ${change.report}`);
  for (const step of change.steps ?? []) {
    if (!(current.steps ?? []).some((s) => s.run === step.run)) lines.push(`step ${step.name}: ${step.run}`);
  }
  const command = change.expect?.command;
  if (command && command !== current.expect?.command) lines.push(`expect.command: ${command}`);
  if ("budget" in change && budgetWidens(current.budget, change.budget)) lines.push(`budget: ${limits(current.budget)} → ${limits(change.budget)}`);
  // "always" runs the model on every run, where "failure" ran it only when a step failed.
  if (change.promptWhen === "always" && current.promptWhen !== "always") lines.push("prompt_when: failure → always (the prompt runs after the steps on every run)");
  // Without a worktree its runs write in the user's checkout.
  if ("isolation" in change && change.isolation !== "worktree" && current.isolation === "worktree") lines.push("isolation: worktree → none");
  return lines;
}

/**
 * The fields of a definition beside its work (prompt, steps) and bounds (budget, isolation), one
 * line each: how its runs check their work, where they run and with what, and where results go.
 * With those, what the user is shown when approving one that was never approved.
 */
export function settingLines(d: ApprovedDefinition): string[] {
  return [
    ...(d.steps?.length && d.prompt ? [`prompt_when: ${d.promptWhen === "always" ? "always (after the steps, every run)" : "failure (only when a step fails)"}`] : []),
    ...(d.expect?.command ? [`expect.command: ${d.expect.command}`] : []),
    ...(d.expect?.files?.length ? [`expect.files: ${d.expect.files.join(", ")}`] : []),
    `agent: ${d.agent}`, `model: ${modelText(d.model)}`, `worker: ${d.worker ?? "local"}`,
    `report: ${d.report ?? "session"}${d.channels ? `; channels: ${d.channels.join(", ")}` : ""}`, `notify: ${d.notify}`,
  ];
}

/**
 * Every field that differs between the definition the user approved and the one to approve now
 * (what enabling a paused automation that changed shows), one line each; empty: nothing changed.
 */
export function changesSince(approved: ApprovedDefinition, next: ApprovedDefinition): string[] {
  const lines: string[] = [];
  const differs = (key: keyof ApprovedDefinition) => canonicalJson(approved[key]) !== canonicalJson(next[key]);
  if (differs("prompt")) lines.push(next.prompt ? `prompt: ${next.prompt}` : "prompt: removed");
  lines.push(...stepChanges(approved.steps ?? [], next.steps ?? []));
  if (approved.expect?.command !== next.expect?.command) lines.push(`expect.command: ${next.expect?.command ?? "removed"}`);
  if (canonicalJson(approved.expect?.files) !== canonicalJson(next.expect?.files)) lines.push(`expect.files: ${next.expect?.files?.join(", ") || "none"}`);
  if (differs("agent")) lines.push(`agent: ${approved.agent} → ${next.agent}`);
  if (differs("model")) lines.push(`model: ${modelText(approved.model)} → ${modelText(next.model)}`);
  if (differs("worker")) lines.push(`worker: ${approved.worker ?? "local"} → ${next.worker ?? "local"}`);
  if (differs("report")) lines.push(`report: ${approved.report ?? "session"} → ${next.report ?? "session"}`);
  if (differs("channels")) lines.push(`channels: ${approved.channels?.join(", ") ?? "none"} → ${next.channels?.join(", ") ?? "none"}`);
  if (differs("notify")) lines.push(`notify: ${approved.notify} → ${next.notify}`);
  if (differs("budget")) lines.push(`budget: ${limits(approved.budget)} → ${limits(next.budget)}`);
  if (differs("promptWhen")) lines.push(`prompt_when: ${approved.promptWhen ?? "failure"} → ${next.promptWhen ?? "failure"}`);
  if (differs("isolation")) lines.push(`isolation: ${approved.isolation ?? "none"} → ${next.isolation ?? "none"}`);
  const before = approved.triggers.map((t) => canonicalJson(t));
  const after = next.triggers.map((t) => canonicalJson(t));
  lines.push(...next.triggers.filter((_, i) => !before.includes(after[i]!)).map((t) => `trigger added: ${describeTrigger(t)}`));
  lines.push(...approved.triggers.filter((_, i) => !after.includes(before[i]!)).map((t) => `trigger removed: ${describeTrigger(t)}`));
  return lines;
}

function stepChanges(approved: NonNullable<ApprovedDefinition["steps"]>, next: NonNullable<ApprovedDefinition["steps"]>): string[] {
  const same = (a: object, b: object) => canonicalJson(a) === canonicalJson(b);
  const changed = next.filter((step, i) => !approved[i] || !same(approved[i]!, step)).map((s) => `step ${s.name}: ${s.run}`);
  const removed = approved.filter((step) => !next.some((s) => s.name === step.name)).map((s) => `step ${s.name}: removed`);
  return [...changed, ...removed];
}

/** A worker's checkout is elsewhere: a command run here after each run would judge the wrong files. */
export function refuseRemoteExpectCommand(fields: Partial<AutomationFields>): string | undefined {
  const worker = fields.worker?.trim();
  if (!fields.expect?.command || worker === undefined || worker === "" || worker === "local") return undefined;
  return "expect.command runs on this machine, but the runs' children on a worker work on the worker's checkout: leave out expect.command (expect.files is checked on the worker), or use worker \"local\".";
}

/** The budget is the user's limit on unattended spending: a limit raised or removed spends more than was approved. */
function budgetWidens(current: AutomationBudget | undefined, next: AutomationBudget | undefined): boolean {
  const keys = Object.keys(current ?? {}) as (keyof AutomationBudget)[];
  return keys.some((key) => current![key] !== undefined && (next?.[key] === undefined || next[key]! > current![key]!));
}

const limits = (b: AutomationBudget | undefined) => (b ? budgetText(b) : "no limit");

function modelText(model: ModelRef | undefined): string {
  return model ? `${model.providerID}/${model.modelID}` : "the default model";
}

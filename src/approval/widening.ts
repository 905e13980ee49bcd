import type { Automation } from "../automations/automation.ts";
import { budgetText, type AutomationBudget } from "../automations/automation-budget.ts";
import type { AutomationFields } from "../automations/automation-catalog.ts";
import type { ModelRef } from "../core/task.ts";

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
  // Without a worktree its runs write in the user's checkout.
  if ("isolation" in change && change.isolation !== "worktree" && current.isolation === "worktree") lines.push("isolation: worktree → none");
  return lines;
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

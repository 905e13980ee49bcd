import type { Automation } from "../automations/automation.ts";
import type { AutomationFields } from "../automations/automation-catalog.ts";
import type { ModelRef } from "../core/task.ts";

/**
 * What a change adds to what an approved automation does, one line each, as the user is shown
 * it before saying yes again. Empty: the change only narrows (pause, fewer runs, quieter notify,
 * a removed channel or step) and asks nothing.
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
  return lines;
}

/** A worker's checkout is elsewhere: a command run here after each run would judge the wrong files. */
export function refuseRemoteExpectCommand(fields: Partial<AutomationFields>): string | undefined {
  const worker = fields.worker?.trim();
  if (!fields.expect?.command || worker === undefined || worker === "" || worker === "local") return undefined;
  return "expect.command runs on this machine, but the runs' children on a worker work on the worker's checkout: leave out expect.command (expect.files is checked on the worker), or use worker \"local\".";
}

function modelText(model: ModelRef | undefined): string {
  return model ? `${model.providerID}/${model.modelID}` : "the default model";
}

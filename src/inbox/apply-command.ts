import type { AutomationService } from "../automations/automation-service.ts";
import type { TaskManager } from "../core/task-manager.ts";
import { isSettled } from "../core/task.ts";
import { parseRunBatchId } from "../automations/automation.ts";
import type { Host } from "../host/host.ts";
import type { InboxCommand } from "./inbox-command.ts";

/**
 * Applies dashboard commands through the same functions the tools use. `apply` returns the
 * outcome or throws why not; `owns` says whether this process should take the command now.
 */
export type CommandHandler = {
  apply(command: InboxCommand): Promise<string>;
  owns(command: InboxCommand): Promise<boolean>;
};

export function commandHandler(manager: TaskManager, automations: AutomationService | undefined, host: Host): CommandHandler {
  return {
    apply: async (command) => {
      if (command.kind === "cancel_task" && parseRunBatchId(command.targetId)) return cancelSteps(automations, command.targetId);
      if (command.kind === "cancel_task") return cancelTask(manager, command.targetId);
      if (!automations) throw new Error("Automations are off in this OpenCode (plugin option automations: false).");
      return applyToAutomation(automations, command);
    },
    // An abort sent through another OpenCode process returns true but leaves the run going (seen
    // on 1.18.33): a running child is cancelled by the process whose server runs it.
    owns: async (command) => {
      if (command.kind !== "cancel_task") return true;
      // A run in its steps phase (named by its batch id) is cancelled by the process running them.
      if (parseRunBatchId(command.targetId)) return automations?.runsStepsOf(command.targetId) ?? false;
      const task = manager.get(command.targetId);
      if (!task || task.status === "queued" || isSettled(task.status)) return true;
      return (await host.statuses())[task.id] !== undefined;
    },
  };
}

async function applyToAutomation(automations: AutomationService, command: InboxCommand): Promise<string> {
  const id = command.targetId;
  switch (command.kind) {
    case "pause":
      automations.update(id, { enabled: false });
      return "Paused.";
    case "resume":
      automations.update(id, { enabled: true });
      return "Resumed: it runs at its next trigger time.";
    case "run_now": {
      const { run } = await automations.runNow(id);
      if (run.status === "starting" || run.status === "running") return `Run #${run.runNo} started.`;
      return `Not started: ${run.status}${run.skipReason ? ` (${run.skipReason})` : ""}.`;
    }
    default:
      automations.delete(id);
      return "Deleted; its run history stays.";
  }
}

/** A run in its steps phase, named by its batch id. */
async function cancelSteps(automations: AutomationService | undefined, batchId: string): Promise<string> {
  const outcome = await automations?.cancelSteps(batchId);
  if (!outcome) throw new Error(`Run ${batchId} is not running its steps any more (its task, if it has one, is cancelled from the task's page).`);
  return outcome;
}

async function cancelTask(manager: TaskManager, taskId: string): Promise<string> {
  const task = manager.get(taskId);
  if (!task) throw new Error(`No task ${taskId} in this project.`);
  if (isSettled(task.status)) return `Already ${task.status}: nothing to cancel.`;
  const cancelled = await manager.cancel(task, "Cancelled from the dashboard");
  return cancelled ? "Cancelled: the child session was stopped." : `Already ${manager.get(taskId)?.status ?? "settled"}: nothing to cancel.`;
}

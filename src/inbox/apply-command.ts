import type { AutomationService } from "../automations/automation-service.ts";
import type { TaskManager } from "../core/task-manager.ts";
import { isSettled } from "../core/task.ts";
import type { InboxCommand } from "./inbox-command.ts";

/** Applies one dashboard command through the same functions the tools use; returns the outcome, throws why not. */
export type ApplyCommand = (command: InboxCommand) => Promise<string>;

export function commandApplier(manager: TaskManager, automations: AutomationService | undefined): ApplyCommand {
  return async (command) => {
    if (command.kind === "cancel_task") return cancelTask(manager, command.targetId);
    if (!automations) throw new Error("Automations are off in this OpenCode (plugin option automations: false).");
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
      case "delete":
        automations.delete(id);
        return "Deleted; its run history stays.";
    }
  };
}

async function cancelTask(manager: TaskManager, taskId: string): Promise<string> {
  const task = manager.get(taskId);
  if (!task) throw new Error(`No task ${taskId} in this project.`);
  if (isSettled(task.status)) return `Already ${task.status}: nothing to cancel.`;
  const cancelled = await manager.cancel(task, "Cancelled from the dashboard");
  return cancelled ? "Cancelled: the child session was stopped." : `Already ${manager.get(taskId)?.status ?? "settled"}: nothing to cancel.`;
}

import type { Automations } from "../automations/automation-layer.ts";
import type { AutomationAccess } from "../automations/automation-access.ts";
import type { TaskManager } from "../core/task-manager.ts";
import { isSettled } from "../core/task.ts";
import { parseRunName } from "../automations/automation.ts";
import { USER_APPROVAL } from "../automations/approved-version.ts";
import type { Host } from "../host/host.ts";
import type { InboxCommand } from "./inbox-command.ts";
import { changedSinceLooked, proposalVersion } from "../proposals/proposal-version.ts";

/**
 * Applies inbox commands (from the dashboard or the command line) through the same functions the tools use. `apply` returns the
 * outcome or throws why not; `owns` says whether this process should take the command now.
 */
export type CommandHandler = {
  apply(command: InboxCommand): Promise<string>;
  owns(command: InboxCommand): Promise<boolean>;
};

export function commandHandler(manager: TaskManager, automations: AutomationAccess | undefined, host: Host): CommandHandler {
  return {
    apply: async (command) => {
      if (command.kind === "cancel_task" && parseRunName(command.targetId)) return cancelSteps(await automations?.ifWanted(), command.targetId);
      if (command.kind === "cancel_task") return cancelTask(manager, command.targetId);
      if (!automations) throw new Error("Automations are off in this OpenCode (plugin option automations: false).");
      return applyToAutomation(await automations.load(), command);
    },
    // An abort sent through another OpenCode process returns true but leaves the run going (seen
    // on 1.18.33): a running child is cancelled by the process whose server runs it.
    owns: async (command) => {
      if (command.kind !== "cancel_task") return true;
      // A run in its steps phase (named by its batch id) is cancelled by the process running them.
      if (parseRunName(command.targetId)) return automations?.loaded()?.runs.runsStepsOf(command.targetId) ?? false;
      const task = manager.get(command.targetId);
      if (!task || task.status === "queued" || isSettled(task.status)) return true;
      return (await host.statuses())[task.id] !== undefined;
    },
  };
}

async function applyToAutomation(automations: Automations, command: InboxCommand): Promise<string> {
  const { catalog, runs } = automations;
  const id = command.targetId;
  if (catalog.require(id).proposal) return applyToProposal(automations, command);
  switch (command.kind) {
    case "pause":
      catalog.update(id, { enabled: false });
      return "Paused.";
    case "resume":
      catalog.update(id, { enabled: true }, USER_APPROVAL); // the user's own act: what it is now is what they resumed
      return "Resumed: it runs at its next trigger time.";
    case "run_now": {
      const { run } = await runs.runNow(catalog.require(id).id);
      if (run.status === "starting" || run.status === "running") return `Run #${run.runNo} started.`;
      return `Not started: ${run.status}${run.skipReason ? ` (${run.skipReason})` : ""}.`;
    }
    case "delete":
      catalog.delete(id);
      return "Deleted; its run history stays.";
    case "approve":
    case "reject": {
      const a = catalog.require(id);
      throw new Error(`Automation ${a.id} "${a.title}" is not a proposal (it was approved already): nothing to ${command.kind}.`);
    }
    default:
      throw new Error(`Unknown command '${command.kind}' (written by a newer version of the plugin?).`);
  }
}

/**
 * Approve and reject come from the user's own act on the page or the command line: approving
 * enables without a second prompt, but only the version the user was shown (the command names
 * it); a proposal changed since then is refused. Deleting a proposal rejects it, as task_delete does.
 */
function applyToProposal(automations: Automations, command: InboxCommand): string {
  const { catalog, proposals } = automations;
  const id = command.targetId;
  switch (command.kind) {
    case "approve": {
      // In one transaction: no change can land between the check and the enabling.
      const a = catalog.transaction(() => {
        const current = catalog.require(id);
        if (command.version !== proposalVersion(current, catalog.triggers(current.id))) throw new Error(changedSinceLooked(current));
        return proposals.approve(current.id, command.source);
      });
      return `Approved "${a.title}": enabled; it runs at its triggers and reports to session ${a.reportTo}.`;
    }
    case "reject":
    case "delete": {
      const a = proposals.reject(id, command.source);
      return `Rejected "${a.title}": deleted; proposing the same again is refused for ${Math.round(proposals.config.cooldownMs / 3600_000)} h.`;
    }
    default:
      throw new Error(`${id} is a proposal: approve or reject it (it cannot be ${command.kind === "run_now" ? "run" : `${command.kind}d`} before that).`);
  }
}

/** A run in its steps phase, named by its batch id. */
async function cancelSteps(automations: Automations | undefined, batchId: string): Promise<string> {
  const outcome = await automations?.runs.cancelSteps(batchId);
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

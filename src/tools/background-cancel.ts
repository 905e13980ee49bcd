import type { TaskManager } from "../core/task-manager.ts";
import { isSettled } from "../core/task.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import { TaskError } from "../core/errors.ts";
import { defineTool } from "./tool-kit.ts";
import type { AutomationAccess } from "../automations/automation-access.ts";

type Deps = { manager: TaskManager; onCrash: (message: string, error: unknown) => void; automations?: AutomationAccess };

export function backgroundCancelTool({ manager, onCrash, automations }: Deps) {
  return defineTool({
    name: "background_cancel",
    description: "Cancel a task, or a batch.",
    args: (s) => ({ task_id: s.string().describe("task/batch id or prefix") }),
    onCrash,
    async run(args, call) {
      const scope = await manager.scopeOf(call.sessionID);
      // An automation run's batch id while its steps run (it has no task yet): the user's runs, never a child's to cancel.
      const steps = scope.owner ? undefined : await (await automations?.ifWanted())?.runs.cancelSteps(args.task_id);
      if (steps) return steps;
      const found = manager.lookup(args.task_id, scope);
      if (found.kind !== "tasks") throw new TaskError(found.message);
      const lines: string[] = [];
      for (const task of found.tasks) {
        if (isSettled(task.status)) lines.push(`${task.id}: already ${task.status}, nothing to cancel.`);
        else lines.push((await cancelTree(manager, task)) ?? `${task.id}: already settled.`);
      }
      return lines.join("\n");
    },
  });
}

/** Cancels a task and, first, its own background tasks (deepest first); the line names them. */
async function cancelTree(manager: TaskManager, task: TaskSummary): Promise<string | undefined> {
  const below = manager.tasksBelow(task.id).filter(({ task: t }) => !isSettled(t.status)).map(({ task: t }) => t.id);
  if (!(await manager.cancel(task, "Cancelled by background_cancel."))) return undefined;
  return below.length === 0 ? `${task.id}: cancelled.` : `${task.id}: cancelled, and its own background tasks first: ${below.join(", ")}.`;
}

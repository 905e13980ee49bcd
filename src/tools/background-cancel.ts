import type { TaskManager } from "../core/task-manager.ts";
import { isSettled } from "../core/task.ts";
import { TaskError } from "../core/errors.ts";
import { defineTool } from "./tool-kit.ts";
import type { AutomationService } from "../automations/automation-service.ts";

type Deps = { manager: TaskManager; onCrash: (message: string, error: unknown) => void; automations?: AutomationService };

export function backgroundCancelTool({ manager, onCrash, automations }: Deps) {
  return defineTool({
    name: "background_cancel",
    description: "Cancel a running background task, or all of a batch.",
    args: (s) => ({ task_id: s.string().describe("task or batch id, or a unique prefix") }),
    onCrash,
    async run(args) {
      // An automation run's batch id while its steps run (it has no task yet).
      const steps = await automations?.cancelSteps(args.task_id);
      if (steps) return steps;
      const found = manager.lookup(args.task_id);
      if (found.kind !== "tasks") throw new TaskError(found.message);
      const lines: string[] = [];
      for (const task of found.tasks) {
        if (isSettled(task.status)) lines.push(`${task.id}: already ${task.status}, nothing to cancel.`);
        else lines.push((await manager.cancel(task, "Cancelled by background_cancel.")) ? `${task.id}: cancelled.` : `${task.id}: already settled.`);
      }
      return lines.join("\n");
    },
  });
}

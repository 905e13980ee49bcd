import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./task-args.ts";

export function taskDeleteTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_delete",
    description: "Delete an automation, its triggers and waiting runs (a running run finishes).",
    args: (s) => ({ id: s.string() }),
    onCrash,
    async run(args) {
      const a = automations.delete(args.id);
      return `Deleted automation ${a.id} "${a.title}".`;
    },
  });
}

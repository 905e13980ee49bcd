import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./automation-args.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";

export function taskTriggerRemoveTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_trigger_remove",
    description: "Remove a trigger by its id (see task_read).",
    args: (s) => ({ trigger_id: s.string() }),
    onCrash,
    async run(args) {
      const t = automations.catalog.removeTrigger(args.trigger_id);
      return `Removed trigger ${t.id} (${describeTrigger(t.spec)}) from ${t.automationId}.`;
    },
  });
}

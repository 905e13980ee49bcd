import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./task-args.ts";
import type { TriggerInput } from "../automations/trigger-spec.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { isoTime } from "../automations/automation-text.ts";

export function taskTriggerAddTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_trigger_add",
    description: "Add a trigger to an automation; trigger is one object as in task_create's triggers.",
    args: (s) => ({ id: s.string(), trigger: s.record(s.string(), s.unknown()) }),
    onCrash,
    async run(args) {
      const a = automations.require(args.id);
      const [trigger] = automations.parseTriggers([args.trigger as TriggerInput], a.id);
      automations.addTriggers(a.id, [trigger!]);
      return `Added trigger ${trigger!.id} (${describeTrigger(trigger!.spec)}, next ${isoTime(trigger!.nextAt)}) to ${a.id}.`;
    },
  });
}

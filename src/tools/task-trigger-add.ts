import { defineTool } from "./tool-kit.ts";
import { triggerArg, type AutomationToolDeps } from "./task-args.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { isoTime } from "../automations/automation-text.ts";

export function taskTriggerAddTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_trigger_add",
    description: "Add a trigger (as in task_create) to an automation.",
    args: (s) => ({ id: s.string(), trigger: triggerArg(s, false) }),
    onCrash,
    async run(args) {
      const a = automations.require(args.id);
      const [trigger] = automations.parseTriggers([args.trigger], a.id);
      automations.addTriggers(a.id, [trigger!]);
      return `Added trigger ${trigger!.id} (${describeTrigger(trigger!.spec)}, next ${isoTime(trigger!.nextAt)}) to ${a.id}.`;
    },
  });
}

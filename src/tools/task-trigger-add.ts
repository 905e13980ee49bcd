import { defineTool } from "./tool-kit.ts";
import { allowTriggerCommands, webhookLines, type AutomationToolDeps } from "./automation-args.ts";
import type { TriggerInput } from "../automations/trigger-spec.ts";
import { triggerLine } from "../automations/automation-text.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { neverApproved } from "../automations/automation.ts";
import { approve } from "./task-create.ts";

export function taskTriggerAddTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_trigger_add",
    description: "Add a trigger (one object as in task_create's triggers) to an automation.",
    args: (s) => ({ id: s.string(), trigger: s.record(s.string(), s.unknown()) }),
    // The description says what it is; task_create's schema shows the shape.
    shown: (s) => ({ id: s.string(), trigger: s.any() }),
    onCrash,
    async run(args, call) {
      const a = automations.catalog.require(args.id);
      const input = args.trigger as TriggerInput;
      const triggers = automations.catalog.parseTriggers([input], a.id);
      const webhooks = await automations.catalog.prepareEventTriggers(triggers);
      // A new trigger makes an approved automation run at new times or on new events: the user says yes again.
      const approval = neverApproved(a) ? undefined : automations.catalog.approvalOf(a, {}, triggers).key;
      if (approval) await approve(call.ask, { title: a.title, key: approval }, `Changes: new trigger ${describeTrigger(triggers[0]!.spec)}`, [describeTrigger(triggers[0]!.spec)], "the trigger was not added");
      await allowTriggerCommands(triggers, call, "the trigger was not added");
      automations.catalog.addTriggers(a.id, triggers, webhooks, approval);
      return [`Added trigger ${triggers[0]!.id} (${triggerLine(triggers[0]!)}) to ${a.id}.`, ...webhookLines(triggers, webhooks)].join("\n");
    },
  });
}

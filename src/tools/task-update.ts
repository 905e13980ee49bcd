import { defineTool } from "./tool-kit.ts";
import { allowRunCommand, fieldArgs, toFields, type AutomationToolDeps } from "./task-args.ts";
import { neverApproved } from "../automations/automation.ts";
import { stateText } from "../automations/automation-text.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { approve } from "./task-create.ts";

export function taskUpdateTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_update",
    description: "Change an automation: enabled false pauses, true resumes; expect {} and channels [] remove them; report_here moves reports here.",
    args: (s) => ({ id: s.string(), title: s.string().optional(), ...fieldArgs(s, false), report_here: s.boolean().optional() }),
    onCrash,
    async run(args, call) {
      const clearsExpect = args.expect !== undefined && !args.expect.files && !args.expect.command;
      const fields = toFields({ ...args, expect: clearsExpect ? undefined : args.expect });
      if (clearsExpect) fields.expect = undefined;
      if (fields.agent) await automations.checkAgent(fields.agent);
      const current = automations.require(args.id);
      automations.checkChannels(fields, current);
      // Created disabled, it was never approved: enabling it is when the user is asked.
      if (fields.enabled && neverApproved(current)) {
        await approve(call.ask, current.title, fields.prompt ?? current.prompt, automations.triggers(current.id).map((t) => describeTrigger(t.spec)), "it stays disabled and unchanged");
      }
      await allowRunCommand(fields, call, "the automation is unchanged");
      const reportTo = args.report_here ? { sessionID: call.sessionID, agent: call.agent, model: call.model } : undefined;
      const a = automations.update(current.id, { ...fields, reportTo });
      return `Updated automation ${a.id} "${a.title}": ${stateText(a)}.`;
    },
  });
}

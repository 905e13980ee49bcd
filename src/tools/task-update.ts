import { defineTool } from "./tool-kit.ts";
import { allowRunCommand, allowStepCommands, fieldArgs, toFields, type AutomationToolDeps } from "./task-args.ts";
import { checkRunnable } from "../automations/step-spec.ts";
import { neverApproved } from "../automations/automation.ts";
import { stateText } from "../automations/automation-text.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { approvalText, approve } from "./task-create.ts";

export function taskUpdateTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_update",
    description: "Change an automation: enabled false pauses, true resumes; expect {}, steps [], channels [], prompt \"\" remove; report_here: report here.",
    args: (s) => ({ id: s.string(), title: s.string().optional(), ...fieldArgs(s, false), report_here: s.boolean().optional() }),
    onCrash,
    async run(args, call) {
      const clearsExpect = args.expect !== undefined && !args.expect.files && !args.expect.command;
      const fields = toFields({ ...args, expect: clearsExpect ? undefined : args.expect }, true);
      if (clearsExpect) fields.expect = undefined;
      if (fields.agent) await automations.checkAgent(fields.agent);
      const current = automations.require(args.id);
      automations.checkChannels(fields, current);
      // Created disabled, it was never approved: enabling it is when the user is asked.
      if (fields.enabled && neverApproved(current)) {
        const work = approvalText({ prompt: fields.prompt ?? current.prompt, steps: fields.steps ?? current.steps });
        await approve(call.ask, current.title, work, automations.triggers(current.id).map((t) => describeTrigger(t.spec)), "it stays disabled and unchanged");
      }
      checkRunnable({ ...current, ...fields });
      await allowRunCommand(fields, call, "the automation is unchanged");
      await allowStepCommands(fields.steps, call, "the automation is unchanged", current.steps);
      const reportTo = args.report_here ? { sessionID: call.sessionID, agent: call.agent, model: call.model } : undefined;
      const a = automations.update(current.id, { ...fields, reportTo });
      return `Updated automation ${a.id} "${a.title}": ${stateText(a)}.`;
    },
  });
}

import { defineTool } from "./tool-kit.ts";
import { fieldArgs, toFields, type AutomationToolDeps } from "./task-args.ts";
import { stateText } from "../automations/automation-text.ts";

export function taskUpdateTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_update",
    description: "Change an automation's fields; enabled false pauses it, true resumes. report_here: report to this session.",
    args: (s) => ({ id: s.string(), title: s.string().optional(), ...fieldArgs(s), report_here: s.boolean().optional() }),
    onCrash,
    async run(args, call) {
      const fields = toFields(args);
      if (fields.agent) await automations.checkAgent(fields.agent);
      const reportTo = args.report_here ? { sessionID: call.sessionID, agent: call.agent, model: call.model } : undefined;
      const a = automations.update(args.id, { ...fields, reportTo });
      return `Updated automation ${a.id} "${a.title}": ${stateText(a)}.`;
    },
  });
}

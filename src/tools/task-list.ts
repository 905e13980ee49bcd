import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./task-args.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { nextRunText, stateText } from "../automations/automation-text.ts";

export function taskListTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_list",
    description: "This project's automations: state, triggers, next and last run.",
    args: () => ({}),
    onCrash,
    async run() {
      const all = automations.list();
      if (all.length === 0) return "No automations in this project. task_create makes one.";
      return all.map(({ automation: a, triggers, lastRun }) => {
        const shortTriggers = triggers.map((t) => describeTrigger(t.spec)).join(", ") || "no triggers";
        const last = lastRun ? `last run #${lastRun.runNo ?? "-"} ${lastRun.status}` : "never run";
        return `- ${a.id} "${a.title}": ${stateText(a)}; ${shortTriggers}; next ${nextRunText(triggers, a)}; ${last}`;
      }).join("\n");
    },
  });
}

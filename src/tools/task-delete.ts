import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./automation-args.ts";

export function taskDeleteTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_delete",
    description: "Delete an automation, its triggers and waiting runs (a running run finishes); a proposal: rejects it.",
    args: (s) => ({ id: s.string() }),
    onCrash,
    async run(args) {
      const proposals = automations.proposals;
      if (automations.catalog.require(args.id).proposal) {
        const a = proposals.reject(args.id, "conversation");
        const hours = Math.round(proposals.config.cooldownMs / 3600_000);
        return `Rejected proposal ${a.id} "${a.title}": deleted; proposing the same again is refused for ${hours} h.`;
      }
      const a = automations.catalog.delete(args.id);
      return `Deleted automation ${a.id} "${a.title}".`;
    },
  });
}

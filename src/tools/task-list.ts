import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./automation-args.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { firstLine, nextRunText, stateText } from "../automations/automation-text.ts";
import type { Automation, Trigger } from "../automations/automation.ts";
import { PROPOSAL_EXPIRY_MS } from "../proposals/proposal-rules.ts";

export function taskListTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_list",
    description: "This project's automations (state, triggers, next and last run) and proposals.",
    args: () => ({}),
    onCrash,
    async run() {
      automations.proposals.expire();
      const all = automations.catalog.list();
      const active = all.filter(({ automation }) => !automation.proposal);
      const proposed = all.filter(({ automation }) => automation.proposal);
      if (all.length === 0) return "No automations in this project. task_create makes one.";
      const lines = active.map(({ automation: a, triggers, lastRun }) => {
        const last = lastRun ? `last run #${lastRun.runNo ?? "-"} ${lastRun.status}` : "never run";
        return `- ${a.id} "${a.title}": ${stateText(a)}; ${triggerText(triggers)}; next ${nextRunText(triggers, a)}; ${last}`;
      });
      return [
        ...(active.length ? lines : ["No automations yet."]),
        ...(proposed.length ? [`Proposals waiting for the user (${proposed.length}; task_update enabled: true approves, task_delete rejects):`] : []),
        ...proposed.map(({ automation: a, triggers }) => proposalLine(a, triggers)),
      ].join("\n");
    },
  });
}

function triggerText(triggers: Trigger[]): string {
  return triggers.map((t) => describeTrigger(t.spec)).join(", ") || "no triggers";
}

function proposalLine(a: Automation, triggers: Trigger[]): string {
  const expires = new Date(a.proposal!.proposedAt + PROPOSAL_EXPIRY_MS).toISOString().slice(0, 16).replace("T", " ");
  return `- ${a.id} "${a.title}": ${triggerText(triggers)}; why: ${firstLine(a.proposal!.reason, 200)}; expires ${expires} UTC`;
}

import { defineTool } from "./tool-kit.ts";
import { fieldArgs, requireText, toFields, triggerArg, webhookLines, type AutomationToolDeps } from "./automation-args.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { checkRunnable } from "../automations/step-spec.ts";
import { refuseRemoteCommand } from "./task-create.ts";
import type { ProposalService } from "../proposals/proposal-service.ts";
import type { CallContext } from "./tool-kit.ts";
import type { Automation } from "../automations/automation.ts";
import { budgetText } from "../automations/automation-budget.ts";
import { ISOLATION_WORDS } from "../proposals/proposal-definition.ts";

const DESCRIPTION = "Propose an automation for the user to approve: task_create's fields + reason (why, briefly). Stored disabled.";

export function taskProposeTool({ automations, onCrash, hasWorkers }: AutomationToolDeps) {
  return defineTool({
    name: "task_propose",
    description: DESCRIPTION,
    args: (s) => {
      const { enabled: _enabled, ...fields } = fieldArgs(s, false);
      return { title: s.string(), reason: s.string(), ...fields, triggers: s.array(triggerArg(s)).optional() };
    },
    // task_create's schema shows every field's shape; repeating it here would cost every request ~2,000 characters.
    shown: (s) => {
      const any = s.any().optional();
      return {
        title: s.string(), reason: s.string(), prompt: any, triggers: any,
        steps: any, agent: any, model: any, notify: any, session: any, max_runs: any, overlap: any,
        catch_up: any, expect: any, channels: any, report: any, budget: any, isolation: any, prompt_when: any, ...(hasWorkers ? { worker: any } : {}),
      };
    },
    onCrash,
    async run(args, call) {
      const proposals = automations.proposals;
      requireText("reason", args.reason);
      const id = automations.catalog.newAutomationId();
      const triggers = automations.catalog.parseTriggers(args.triggers ?? [], id);
      const fields = {
        agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip",
        ...toFields(args), title: args.title, prompt: args.prompt ?? "", enabled: false,
      } as const;
      checkRunnable(fields);
      refuseRemoteCommand(fields);
      await automations.catalog.checkAgent(fields.agent);
      automations.catalog.checkChannels(fields);
      automations.catalog.checkWorker(fields.worker);
      const webhooks = await automations.catalog.prepareEventTriggers(triggers);
      const proposer = proposals.proposerOf(call.sessionID) ?? { creator: creatorOf(call), by: "conversation" as const };
      const a = proposals.propose({ id, fields, triggers, creator: proposer.creator, reason: args.reason.trim(), by: proposer.by, webhooks });
      return answer(a, proposals, triggers.map((t) => `- ${describeTrigger(t.spec)}`), webhookLines(triggers, webhooks));
    },
  });
}

function creatorOf(call: CallContext) {
  return { sessionID: call.sessionID, agent: call.agent, model: call.model };
}

function answer(a: Automation, proposals: ProposalService, triggers: string[], webhooks: string[]): string {
  const { id, title } = a;
  return [
    `Proposed automation ${id} "${title}": stored disabled; nothing runs until the user approves it (it expires in 7 days).`,
    ...(triggers.length ? ["Triggers once approved:", ...triggers] : ["No triggers: once approved it runs only with task_run."]),
    // What bounds it is part of what the user decides on: say it with the rest.
    ...(a.budget ? [`Budget: ${budgetText(a.budget)}.`] : []),
    ...(a.isolation === "worktree" ? [`Isolation: worktree (${ISOLATION_WORDS}).`] : []),
    ...webhooks,
    // Only the user approves: never hand the model a command that would approve it (issue 22).
    `Now tell the user what you proposed and why. The user decides: in this conversation (a yes here: call task_update { id: "${id}", enabled: true }, which asks the user), on the dashboard, or with the command line in their own terminal. A no is task_delete { id: "${id}" }, remembered for ${Math.round(proposals.config.cooldownMs / 3600_000)} h.`,
  ].join("\n");
}

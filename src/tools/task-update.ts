import { defineTool } from "./tool-kit.ts";
import { allowRunCommand, allowStepCommands, allowTriggerCommands, fieldArgs, toFields, type AutomationToolDeps } from "./automation-args.ts";
import { checkRunnable } from "../automations/step-spec.ts";
import { neverApproved, type Automation } from "../automations/automation.ts";
import { stateText } from "../automations/automation-text.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { approvalText, approve, refuseRemoteCommand } from "./task-create.ts";
import { wideningChanges } from "../approval/widening.ts";
import type { AutomationFields } from "../automations/automation-catalog.ts";
import type { Automations } from "../automations/automation-layer.ts";
import type { CallContext } from "./tool-kit.ts";

export function taskUpdateTool({ automations, onCrash, hasWorkers }: AutomationToolDeps) {
  return defineTool({
    name: "task_update",
    description: "Change an automation (fields as task_create): enabled false pauses, true resumes or approves a proposal; expect/budget {}, steps/channels [], prompt \"\" remove; report_here: report here.",
    args: (s) => ({ id: s.string(), title: s.string().optional(), ...fieldArgs(s, false), report_here: s.boolean().optional() }),
    // task_create's schema shows each field's shape; the errors teach the rest.
    shown: (s) => {
      const any = s.any().optional();
      return {
        id: s.string(), title: any, prompt: any, agent: any, model: any, notify: any, session: any, max_runs: any, overlap: any,
        catch_up: any, enabled: s.boolean().optional(), expect: any, steps: any, channels: any, report: any, budget: any, isolation: any, report_here: any,
        ...(hasWorkers ? { worker: any } : {}),
      };
    },
    onCrash,
    async run(args, call) {
      const clearsExpect = args.expect !== undefined && !args.expect.files && !args.expect.command;
      const fields = toFields({ ...args, expect: clearsExpect ? undefined : args.expect }, true);
      if (clearsExpect) fields.expect = undefined;
      if (fields.agent) await automations.catalog.checkAgent(fields.agent);
      const current = automations.catalog.require(args.id);
      automations.catalog.checkChannels(fields, current);
      automations.catalog.checkWorker(fields.worker);
      const approving = fields.enabled === true && current.proposal !== undefined;
      // Created disabled (or proposed), it was never approved: enabling it is when the user is asked.
      if (fields.enabled && neverApproved(current)) {
        // What it will be once enabled: this call's changes over the stored definition.
        const bounds = { budget: "budget" in fields ? fields.budget : current.budget, isolation: "isolation" in fields ? fields.isolation : current.isolation };
        const work = approvalText({ prompt: fields.prompt ?? current.prompt, steps: fields.steps ?? current.steps, ...bounds });
        const outcome = approving ? "it stays a proposal, unchanged" : "it stays disabled and unchanged";
        await approve(call.ask, current.title, work, automations.catalog.triggers(current.id).map((t) => describeTrigger(t.spec)), outcome, bounds);
      }
      checkRunnable({ ...current, ...fields });
      refuseRemoteCommand({ ...current, ...fields });
      // Approved once, it does not keep the approval for more: what it would newly do is asked again.
      const widening = neverApproved(current) ? [] : wideningChanges(current, fields);
      if (widening.length > 0) {
        await approve(call.ask, current.title, `Changes: ${widening.join("\n")}`, automations.catalog.triggers(current.id).map((t) => describeTrigger(t.spec)), "the automation is unchanged");
      }
      if (approving) await allowProposalCommands(automations, current, fields, call);
      else {
        await allowRunCommand(fields, call, "the automation is unchanged");
        await allowStepCommands(fields.steps, call, "the automation is unchanged", current.steps);
      }
      const reportTo = args.report_here ? { sessionID: call.sessionID, agent: call.agent, model: call.model } : undefined;
      if (approving) {
        const a = automations.proposals.approve(current.id, "conversation", { ...fields, ...(reportTo ? { reportTo } : {}) });
        return `Approved proposal ${a.id} "${a.title}": ${stateText(a)}; it runs at its triggers and reports to ${a.reportTo === call.sessionID ? "this session" : `session ${a.reportTo}`}.`;
      }
      const a = automations.catalog.update(current.id, { ...fields, reportTo });
      return `Updated automation ${a.id} "${a.title}": ${stateText(a)}.`;
    },
  });
}

/** A proposal's commands were never put to the user: approving it asks for each, as task_create does. */
async function allowProposalCommands(automations: Automations, current: Automation, fields: Partial<AutomationFields>, call: CallContext): Promise<void> {
  const refused = "it stays a proposal, unchanged";
  await allowRunCommand({ expect: "expect" in fields ? fields.expect : current.expect }, call, refused);
  await allowStepCommands(fields.steps ?? current.steps, call, refused);
  await allowTriggerCommands(automations.catalog.triggers(current.id), call, refused);
}

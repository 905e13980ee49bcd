import { defineTool } from "./tool-kit.ts";
import { allowRunCommand, allowStepCommands, allowTriggerCommands, fieldArgs, toFields, type AutomationToolDeps } from "./automation-args.ts";
import { checkRunnable } from "../automations/step-spec.ts";
import { neverApproved, type Automation } from "../automations/automation.ts";
import { stateText } from "../automations/automation-text.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { approvalText, approve, refuseRemoteCommand, type ApprovalBounds } from "./task-create.ts";
import { changesSince, settingLines, wideningChanges } from "../automations/widening.ts";
import type { ApprovedDefinition } from "../automations/approved-version.ts";
import type { AutomationFields } from "../automations/automation-catalog.ts";
import type { Automations } from "../automations/automation-layer.ts";
import type { CallContext } from "./tool-kit.ts";

export function taskUpdateTool({ automations, onCrash, hasWorkers }: AutomationToolDeps) {
  return defineTool({
    name: "task_update",
    description: "Change an automation (task_create's fields): enabled false pauses, true resumes/approves a proposal; {}, [] or \"\" removes a field; report_here: report here.",
    args: (s) => ({ id: s.string(), title: s.string().optional(), ...fieldArgs(s, false), report_here: s.boolean().optional() }),
    // task_create's schema shows each field's shape; the errors teach the rest.
    shown: (s) => {
      const any = s.any().optional();
      return {
        id: s.string(), title: any, prompt: any, agent: any, model: any, notify: any, session: any, max_runs: any, overlap: any,
        catch_up: any, enabled: s.boolean().optional(), expect: any, steps: any, channels: any, report: any, budget: any, isolation: any, prompt_when: any, report_here: any,
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
      checkRunnable({ ...current, ...fields });
      refuseRemoteCommand({ ...current, ...fields });
      // What it will be after this call, and the key the user is asked for it ("always" covers that version only).
      const next = automations.catalog.approvalOf(current, fields);
      const asked = approvalPrompt(current, fields, next.definition);
      if (asked) {
        const triggers = automations.catalog.triggers(current.id).map((t) => describeTrigger(t.spec));
        await approve(call.ask, { title: current.title, key: next.key }, asked.text, triggers, asked.outcome, asked.bounds);
      }
      const approved = asked ? next.key : undefined;
      if (approving) await allowProposalCommands(automations, current, fields, call);
      else {
        await allowRunCommand(fields, call, "the automation is unchanged");
        await allowStepCommands(fields.steps, call, "the automation is unchanged", current.steps, stepsOf(automations, current));
      }
      const reportTo = args.report_here ? { sessionID: call.sessionID, agent: call.agent, model: call.model } : undefined;
      if (approving) {
        const a = automations.proposals.approve(current.id, "conversation", { ...fields, ...(reportTo ? { reportTo } : {}) }, approved);
        return `Approved proposal ${a.id} "${a.title}": ${stateText(a)}; it runs at its triggers and reports to ${a.reportTo === call.sessionID ? "this session" : `session ${a.reportTo}`}.`;
      }
      const a = automations.catalog.update(current.id, { ...fields, reportTo }, approved);
      return `Updated automation ${a.id} "${a.title}": ${stateText(a)}.`;
    },
  });
}

/**
 * What the user is asked before a change is stored, if anything. Never approved (created disabled,
 * or proposed): enabling it shows all of it. Approved: enabling a paused one shows every field
 * changed since that approval; any other change shows what it adds (wideningChanges).
 */
function approvalPrompt(current: Automation, fields: Partial<AutomationFields>, next: ApprovedDefinition): { text: string; outcome: string; bounds?: ApprovalBounds } | undefined {
  const enabling = fields.enabled === true && !current.enabled;
  if (neverApproved(current)) {
    if (!fields.enabled) return undefined;
    const outcome = current.proposal ? "it stays a proposal, unchanged" : "it stays disabled and unchanged";
    return { text: [approvalText(next), ...settingLines(next)].join("\n"), outcome, bounds: { budget: next.budget, isolation: next.isolation } };
  }
  const changes = enabling ? changedSinceApproval(current, next) : wideningChanges(current, fields);
  if (changes.length === 0) return undefined;
  const since = enabling ? `Changes since the approved version${current.approved ? ` (v${current.approved.version})` : ""}` : "Changes";
  return { text: `${since}: ${changes.join("\n")}`, outcome: enabling ? "it stays paused and unchanged" : "the automation is unchanged" };
}

/** An approved automation's changes since that approval; all of it when the approval was given before the plugin kept it. */
function changedSinceApproval(current: Automation, next: ApprovedDefinition): string[] {
  return current.approved ? changesSince(current.approved.definition, next) : [approvalText(next), ...settingLines(next)];
}

/** A proposal's commands were never put to the user: approving it asks for each, as task_create does. */
async function allowProposalCommands(automations: Automations, current: Automation, fields: Partial<AutomationFields>, call: CallContext): Promise<void> {
  const refused = "it stays a proposal, unchanged";
  await allowRunCommand({ expect: "expect" in fields ? fields.expect : current.expect }, call, refused);
  await allowStepCommands(fields.steps ?? current.steps, call, refused, [], stepsOf(automations, current));
  await allowTriggerCommands(automations.catalog.triggers(current.id), call, refused);
}

/** What a step's prompt names: which automation, fired by what. */
function stepsOf(automations: Automations, current: Automation): { title: string; triggers: string[] } {
  return { title: current.title, triggers: automations.catalog.triggers(current.id).map((t) => describeTrigger(t.spec)) };
}

import { AutomationRefusal, errorMessage } from "../core/errors.ts";
import { defineTool } from "./tool-kit.ts";
import type { tool } from "@opencode-ai/plugin";
import { shownExpectArg } from "./expect-arg.ts";
import { allowRunCommand, allowStepCommands, allowTriggerCommands, budgetShape, fieldArgs, shownStepsArg, shownTriggerArg, toFields, triggerArg, TRIGGERS_DESCRIPTION, webhookLines, withoutWorker, type AutomationToolDeps } from "./automation-args.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { triggerLine } from "../automations/automation-text.ts";
import { checkRunnable, type Step } from "../automations/step-spec.ts";
import { refuseRemoteExpectCommand } from "../automations/widening.ts";
import { budgetText, type AutomationBudget } from "../automations/automation-budget.ts";
import { ISOLATION_WORDS } from "../proposals/proposal-definition.ts";
import { settingLines } from "../automations/widening.ts";
import { shownPromptWhen } from "./automation-args.ts";

const DESCRIPTION = `Create an automation: background agent prompt and/or shell steps run on schedule, events or task_run; reports here. Not a to-do list; user approves it.`;

export const APPROVAL_PERMISSION = "background_automation";

export function taskCreateTool({ automations, onCrash, hasWorkers }: AutomationToolDeps) {
  const args = (s: typeof tool.schema) => ({ title: s.string(), ...fieldArgs(s, true), triggers: s.array(triggerArg(s)).optional().describe(TRIGGERS_DESCRIPTION) });
  return defineTool({
    name: "task_create",
    description: DESCRIPTION,
    args,
    // Shown looser than parsed (no "additionalProperties"): every request carries it; the parse refuses unknown keys.
    shown: (s) => withoutWorker({ ...args(s), steps: shownStepsArg(s), prompt_when: shownPromptWhen(s), expect: shownExpectArg(s), budget: budgetShape(s), triggers: s.array(shownTriggerArg(s)).optional().describe(TRIGGERS_DESCRIPTION) }, hasWorkers),
    onCrash,
    async run(args, call) {
      if (automations.proposals.proposerOf(call.sessionID)?.by === "discovery") throw new AutomationRefusal("A discovery run only proposes: use task_propose; the user decides.");
      const id = automations.catalog.newAutomationId();
      const triggers = automations.catalog.parseTriggers(args.triggers ?? [], id);
      const webhooks = await automations.catalog.prepareEventTriggers(triggers);
      const fields = {
        agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip", enabled: true,
        ...toFields(args), title: args.title, prompt: args.prompt ?? "",
      } as const;
      checkRunnable(fields);
      refuseRemoteCommand(fields);
      await automations.catalog.checkAgent(fields.agent);
      automations.catalog.checkChannels(fields);
      automations.catalog.checkWorker(fields.worker);
      const approval = automations.catalog.approvalOf({ id, ...fields }, {}, triggers).key;
      if (fields.enabled) await approve(call.ask, { title: args.title, key: approval }, [approvalText(fields), ...settingLines({ ...fields, triggers: [] })].join("\n"), triggers.map((t) => describeTrigger(t.spec)), undefined, fields);
      await allowRunCommand(fields, call, "nothing was stored");
      await allowStepCommands(fields.steps, call, "nothing was stored", [], { title: args.title, triggers: triggers.map((t) => describeTrigger(t.spec)) });
      await allowTriggerCommands(triggers, call, "nothing was stored");
      const created = automations.catalog.create(id, fields, triggers, { sessionID: call.sessionID, agent: call.agent, model: call.model }, webhooks, undefined, approval);
      const lines = created.triggers.map((t) => `- ${t.id}: ${triggerLine(t)}`);
      return [
        `Created automation ${id} "${args.title}" (${fields.enabled ? "enabled" : "paused"}; notify ${fields.notify}). Results report to this session.`,
        ...(lines.length > 0 ? ["Triggers:", ...lines] : ["No triggers: it runs only with task_run."]),
        ...webhookLines(created.triggers, webhooks),
      ].join("\n");
    },
  });
}

/** The automation asked about: its title, and the key of the version being approved (AutomationCatalog.approvalOf). */
export type ApprovalSubject = { title: string; key: string };

/** What is approved besides the work: the limits on its spend and where its runs write. */
export type ApprovalBounds = { budget?: AutomationBudget; isolation?: "worktree" };

/** What the approval prompt shows of the work: the prompt, each step's command, then its budget and isolation when set. */
export function approvalText(a: { prompt: string; steps?: Step[] } & ApprovalBounds): string {
  return [...(a.prompt ? [a.prompt] : []), ...(a.steps ?? []).map((s) => `step ${s.name}: ${s.run}`), ...boundLines(a)].join("\n");
}

function boundLines(a: ApprovalBounds): string[] {
  return [
    ...(a.budget ? [`budget: ${budgetText(a.budget)}`] : []),
    ...(a.isolation === "worktree" ? [`isolation: worktree (${ISOLATION_WORDS})`] : []),
  ];
}

/**
 * OpenCode's own permission prompt; a config `"background_automation": "allow"` skips it. `bounds`
 * also go into the metadata as fields of their own (clients that list prompts show them).
 */
export async function approve(ask: ((input: never) => Promise<void>) | undefined, subject: ApprovalSubject, prompt: string, triggers: string[], outcome = "nothing was stored", bounds: ApprovalBounds = {}) {
  const { title, key } = subject;
  if (!ask) return;
  try {
    // "Always" covers this automation at this definition (its id, version and hash: approvalKey), never its title.
    const always = [key];
    const metadata = { title, prompt, triggers, ...(bounds.budget ? { budget: budgetText(bounds.budget) } : {}), ...(bounds.isolation ? { isolation: bounds.isolation } : {}) };
    await ask({ permission: APPROVAL_PERMISSION, patterns: [key], always, metadata } as never);
  } catch (error) {
    throw new AutomationRefusal(`The user rejected automation "${title}"; ${outcome}. (${errorMessage(error)})`);
  }
}

/** expect.command with a worker is refused, as background_task refuses it. */
export function refuseRemoteCommand(fields: Parameters<typeof refuseRemoteExpectCommand>[0]): void {
  const refusal = refuseRemoteExpectCommand(fields);
  if (refusal) throw new AutomationRefusal(refusal);
}

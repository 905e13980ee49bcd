import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./automation-args.ts";
import type { Expectation } from "../evidence/expectation-check.ts";
import { runLine, stateText, stepDefinitionLines, triggerLine } from "../automations/automation-text.ts";
import { budgetText } from "../automations/automation-budget.ts";
import type { Automation } from "../automations/automation.ts";
import type { Automations } from "../automations/automation-layer.ts";
import { formatSpend } from "../cost/format-spend.ts";
import { runDayLines } from "../automations/run-day-text.ts";
import type { Spend } from "../cost/spend.ts";

export function taskReadTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_read",
    description: "An automation's settings, triggers (next run) and recent runs.",
    args: (s) => ({ id: s.string() }),
    onCrash,
    async run(args) {
      const a = automations.catalog.require(args.id);
      const triggers = automations.catalog.triggers(a.id);
      const runs = automations.runs.runs(a.id, 15);
      return [
        `${a.id} "${a.title}": ${stateText(a)}`,
        `agent ${a.agent}${a.model ? ` model ${a.model.providerID}/${a.model.modelID}` : ""}; notify ${a.notify}; session ${a.sessionMode}; overlap ${a.overlap}; catch_up ${a.catchUp}; runs ${a.runCount}${a.maxRuns ? `/${a.maxRuns}` : ""}; failures in a row ${a.consecutiveFailures}`,
        `prompt${promptWhenText(a)}: ${a.prompt || "none (steps only: no model runs)"}`,
        ...(a.steps?.length ? ["steps (sh -c in the project, in order):", ...stepDefinitionLines(a.steps)] : []),
        ...(a.expect ? [`expect: ${expectText(a.expect)}`] : []),
        ...(a.isolation === "worktree" ? ["isolation: worktree (each run in a fresh worktree of the default branch; a run that changes nothing leaves no branch)"] : []),
        ...spendLines(automations, a),
        ...(a.channels?.length ? [`channels: ${a.channels.join(", ")}${a.report === "channels" ? " (only: the session is not told)" : " (and this session)"}`] : []),
        "Triggers:",
        ...(triggers.length ? triggers.map((t) => `- ${t.id}: ${triggerLine(t, automations.runs.waitingDeliveries(t))}`) : ["- none (task_run only)"]),
        "Recent runs (newest first):",
        ...(runs.length ? runs.flatMap((r) => [runLine(r, triggers), ...automations.runs.channelLines(r.id).map((l) => `    ${l}`)]) : ["- none yet"]),
        ...runDayLines(automations.runs.runDays(a.id, 7)),
      ].join("\n");
    },
  });
}

/** The budget, and what its runs spent today, this week (since Monday, in its zone) and in the last run. */
function spendLines(automations: Automations, a: Automation): string[] {
  const spending = automations.runs.spending;
  const zone = spending.zone(a);
  const budget = a.budget ? [`budget: ${budgetText(a.budget)} (days in ${zone})`] : [];
  const last = spending.lastRun(a);
  if (!last) return [...budget, "spent: nothing yet"];
  const shown = (spend: Spend) => (spend.requests > 0 ? formatSpend(spend) : "nothing");
  return [...budget, `spent: today ${shown(spending.today(a))}; this week ${shown(spending.week(a))}; last run #${last.run.runNo} ${shown(last.spend)}`];
}

function expectText(expect: Expectation): string {
  return [
    ...(expect.files ? [`files ${expect.files.join(", ")} exist, non-empty`] : []),
    ...(expect.command ? [`\`${expect.command}\` exits 0`] : []),
  ].join("; ") + " after each run";
}

/** With steps, when the prompt runs (prompt_when). */
function promptWhenText(a: { prompt: string; steps?: unknown[]; promptWhen?: string }): string {
  if (!a.prompt || !a.steps?.length) return "";
  return a.promptWhen === "always" ? " (prompt_when always: after the steps, every run)" : " (prompt_when failure: only when a step fails)";
}

import { defineTool } from "./tool-kit.ts";
import type { AutomationToolDeps } from "./automation-args.ts";
import { neverApproved, runName } from "../automations/automation.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { approvalText, approve } from "./task-create.ts";
import { settingLines } from "../automations/widening.ts";
import { DAILY_BUDGET_REACHED } from "../automations/automation-budget.ts";

export function taskRunTool({ automations, onCrash }: AutomationToolDeps) {
  return defineTool({
    name: "task_run",
    description: "Run an automation now, whatever its triggers.",
    args: (s) => ({ id: s.string() }),
    onCrash,
    async run(args, call) {
      const a = automations.catalog.require(args.id);
      if (a.proposal) return `task_run: ${a.id} "${a.title}" is a proposal; it runs once the user approves it (task_update { id, enabled: true }).`;
      // Created disabled, it was never approved: running it is as much a use as enabling it.
      if (neverApproved(a)) {
        const approval = automations.catalog.approvalOf(a);
        await approve(call.ask, { title: a.title, key: approval.key }, [approvalText(approval.definition), ...settingLines(approval.definition)].join("\n"), automations.catalog.triggers(a.id).map((t) => describeTrigger(t.spec)), "nothing ran", a);
        automations.catalog.recordApproval(a.id, approval.key);
      }
      const { run, task } = await automations.runs.runNow(a.id);
      if (run.status === "skipped" && run.skipReason?.startsWith(DAILY_BUDGET_REACHED)) return `Not run: ${run.skipReason}. Firings are skipped until tomorrow or until that budget is raised.`;
      if (run.status === "skipped") return `Not run: the previous run of ${run.automationId} is still running (overlap: skip).`;
      if (run.status === "waiting") return `Queued: it starts when the previous run of ${run.automationId} ends (overlap: queue).`;
      if (!task && run.status === "running") return `Started run #${run.runNo} of ${run.automationId}: its steps run first (cancel: background_cancel ${runName(run.automationId, run.runNo!)}); results report by the automation's notify policy.`;
      if (!task) return `Run #${run.runNo} of ${run.automationId} did not start: ${run.summary ?? run.status}`;
      return `Started run #${run.runNo} of ${run.automationId} as background task ${task.id}; results report by the automation's notify policy.`;
    },
  });
}

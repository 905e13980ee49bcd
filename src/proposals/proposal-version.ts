import { createHash } from "node:crypto";
import type { Automation, Trigger } from "../automations/automation.ts";
import { canonicalJson } from "../automations/approved-version.ts";

/**
 * The version of a proposal the user looked at: a hash of everything it would do and everything
 * shown with it (fields, report-to, reason, every trigger). updatedAt is not enough: adding or
 * removing a trigger does not bump it, and two changes can land in the same millisecond.
 * The dashboard's Approve and the CLI carry it; the inbox refuses an approval of another version.
 */
export function proposalVersion(a: Automation, triggers: Pick<Trigger, "id" | "spec">[]): string {
  const definition = {
    title: a.title, reason: a.proposal?.reason, prompt: a.prompt, steps: a.steps, promptWhen: a.promptWhen, agent: a.agent, model: a.model,
    worker: a.worker, isolation: a.isolation, budget: a.budget, expect: a.expect, channels: a.channels, report: a.report, notify: a.notify,
    sessionMode: a.sessionMode, maxRuns: a.maxRuns, overlap: a.overlap, catchUp: a.catchUp,
    reportTo: a.reportTo, reportAgent: a.reportAgent, reportModel: a.reportModel,
    triggers: [...triggers].sort((x, y) => (x.id < y.id ? -1 : 1)).map((t) => ({ id: t.id, spec: t.spec })),
  };
  return createHash("sha256").update(canonicalJson(definition)).digest("hex").slice(0, 32);
}

/** The refusal when the definition changed between the user's look and the approval being applied. */
export function changedSinceLooked(a: Pick<Automation, "id" | "title">): string {
  return `Not approved: proposal ${a.id} "${a.title}": it changed since you looked; look again (reload the dashboard, or run \`opencode-errands proposals\`) and approve what it is now. Nothing was enabled.`;
}

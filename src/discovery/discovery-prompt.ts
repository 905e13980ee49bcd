import type { Automation, Run, Trigger } from "../automations/automation.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { firstLine, stateText } from "../automations/automation-text.ts";
import type { ProposalDecision } from "../store/proposal-repository.ts";

/** What a discovery run is shown of the project's background work. */
export type DiscoveryView = {
  automations: { automation: Automation; triggers: Trigger[]; lastRun?: Run }[];
  rejections: ProposalDecision[];
  failedRuns: { title: string; run: Run }[];
  now: number;
};

const ASK = `You look for background work worth doing in this project while the user is away. Look around (read only: change nothing), and at what exists below.
Propose at most 3 things that would be genuinely useful to run in the background (a check on a schedule, or when something happens: a file changes, CI fails), each only through task_propose with a reason the user will read. Never task_create.
Do not propose what exists, what is proposed already, or what the user rejected. Proposing nothing is a good answer when nothing is clearly useful.
End with one line: what you proposed, or "Nothing to propose."`;

export function discoveryPrompt(view: DiscoveryView): string {
  const active = view.automations.filter((x) => !x.automation.proposal);
  const proposed = view.automations.filter((x) => x.automation.proposal);
  return [
    ASK,
    section("Automations", active.map(({ automation: a, triggers, lastRun }) => `"${a.title}": ${stateText(a)}; ${triggerText(triggers)}; ${lastRun ? `last run ${lastRun.status}` : "never run"}`)),
    section("Proposals waiting for the user", proposed.map(({ automation: a, triggers }) => `"${a.title}": ${triggerText(triggers)}; why: ${firstLine(a.proposal!.reason, 200)}`)),
    section("Rejected by the user lately (do not propose again)", view.rejections.map((d) => `"${d.title}" (${d.triggers.join(", ") || "no triggers"}), ${ago(view.now - d.decidedAt)} ago: ${firstLine(d.work, 160)}`)),
    section("Failed runs lately", view.failedRuns.map(({ title, run }) => `"${title}" run #${run.runNo ?? "-"} ${run.status}, ${ago(view.now - (run.endedAt ?? run.createdAt))} ago: ${firstLine(run.summary, 200)}`)),
  ].join("\n\n");
}

function section(title: string, lines: string[]): string {
  return `${title}:\n${lines.length ? lines.map((l) => `- ${l}`).join("\n") : "- none"}`;
}

function triggerText(triggers: Trigger[]): string {
  return triggers.map((t) => describeTrigger(t.spec)).join(", ") || "no triggers";
}

function ago(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  return minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
}

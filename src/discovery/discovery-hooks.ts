import { noticeLine } from "../core/notice-line.ts";
import type { Automation, Run, Trigger } from "../automations/automation.ts";
import type { AutomationRepository } from "../store/automation-repository.ts";
import { firstLine } from "../automations/automation-text.ts";
import type { RunNotice } from "../automations/run-recorder.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import type { Proposer } from "../proposals/proposal-service.ts";

/** The built-in automation whose runs are the discovery runs (one per project). */
export const DISCOVERY_ID = "audiscovery";

/** What the hooks read: automations, their triggers, a task's unfinished run. */
type DiscoveryReads = Pick<AutomationRepository, "automation" | "automations" | "triggers" | "activeRunOfTask">;

/**
 * The run lifecycle's extra notice, with discovery on: a discovery run tells the session it
 * reports to the proposals it made; nothing when it made none. Small, so it loads with the
 * automation layer while the discovery module itself loads only when it starts.
 */
export function discoveryNotice(store: DiscoveryReads): (a: Automation, run: Run) => RunNotice | undefined {
  return (a, run) => (a.id === DISCOVERY_ID ? proposalsNotice(store, run) : undefined);
}

/** The proposals' proposer, with discovery on: a discovery run's child proposes for the session its run reports to. */
export function discoveryProposer(store: DiscoveryReads): Proposer {
  return (childSessionID) => {
    if (store.activeRunOfTask(childSessionID)?.automationId !== DISCOVERY_ID) return undefined;
    const a = store.automation(DISCOVERY_ID);
    return a && { creator: { sessionID: a.reportTo, agent: a.reportAgent, model: a.reportModel }, by: "discovery" };
  };
}

function proposalsNotice(store: DiscoveryReads, run: Run): RunNotice | undefined {
  const since = run.startedAt ?? run.createdAt;
  const made = store.automations().filter((a) => a.proposal?.by === "discovery" && a.proposal.proposedAt >= since);
  if (made.length === 0) return undefined;
  const lines = made.map((a) => `- ${a.id} "${a.title}" (${triggerText(store.triggers(a.id))}): ${firstLine(a.proposal!.reason, 300)}`);
  const text = [
    `While you were away, discovery proposed ${made.length} automation(s); nothing runs until the user approves:`,
    ...lines,
    "Tell the user. Approve: task_update { id, enabled: true } (asks the user), the dashboard, or `npx opencode-errands proposals approve <id>`. Reject: task_delete { id }.",
  ].join("\n");
  const titles = made.map((a) => `"${a.title}"`).join(", ");
  const line = noticeLine("◇", `discovery proposed ${made.length} automation${made.length === 1 ? "" : "s"} while you were away: ${titles}`, "nothing runs until you approve");
  return { text, line, note: `${made.length} proposal(s)` };
}

function triggerText(triggers: Trigger[]): string {
  return triggers.map((t) => describeTrigger(t.spec)).join(", ") || "no triggers";
}

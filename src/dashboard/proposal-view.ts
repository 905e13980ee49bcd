import type { Automation } from "../automations/automation.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { PROPOSAL_EXPIRY_MS } from "../proposals/proposal-rules.ts";
import type { ProjectAutomation } from "../store/task-reader.ts";
import { commandButton } from "./controls.ts";
import { html, type SafeHtml } from "./html.ts";
import { automationHref, time } from "./page-layout.ts";

/** Automations the agent proposed that wait for the user's decision. */
export function proposalsOf(automations: ProjectAutomation[]): ProjectAutomation[] {
  return automations.filter((a) => a.proposal !== undefined);
}

/** Home's needs-attention part: each proposal with what it would do, and Approve / Reject. */
export function proposalList(proposals: ProjectAutomation[], now: number, back: string): SafeHtml {
  if (proposals.length === 0) return html``;
  return html`<div class="proposals">${proposals.map((a) => html`<article class="proposal" data-proposal="${a.id}">
<h3><span class="tag">proposal</span> <a href="${automationHref(a.projectId, a.id)}">${a.title}</a></h3>
${proposalFields(a, now)}
<p>${commandButton("approve", a.projectId, a.id, back)} ${commandButton("reject", a.projectId, a.id, back)}</p></article>`)}</div>`;
}

/** Why, when it would run, what it would do, who proposed it and until when it waits. */
export function proposalFields(a: ProjectAutomation, now: number): SafeHtml {
  const p = a.proposal!;
  const triggers = a.triggers.map((t) => describeTrigger(t.spec));
  return html`<dl class="fields">
<dt>Why</dt><dd class="reason">${p.reason}</dd>
<dt>Triggers</dt><dd class="triggers">${triggers.length ? triggers.join("; ") : "none: it would run only when asked (task_run)"}</dd>
${a.prompt ? html`<dt>Prompt</dt><dd><pre class="text">${a.prompt}</pre></dd>` : ""}
${a.steps?.length ? html`<dt>Step commands</dt><dd>${a.steps.map((s) => html`<code>${s.run}</code><br>`)}</dd>` : ""}
<dt>Proposed by</dt><dd class="proposed-by">${proposedBy(a)}, ${time(p.proposedAt)}</dd>
<dt>Expires</dt><dd>${expiry(a, now)}</dd>
</dl>`;
}

function proposedBy(a: Automation): string {
  return a.proposal!.by === "discovery" ? `discovery (idle-time look for useful work), reporting to session ${a.reportTo}` : `the agent in session ${a.createdBy}`;
}

function expiry(a: Automation, now: number): SafeHtml {
  const at = a.proposal!.proposedAt + PROPOSAL_EXPIRY_MS;
  return at <= now ? html`expired ${time(at)}: removed at OpenCode's next check` : html`${time(at)}, unless approved or rejected before`;
}

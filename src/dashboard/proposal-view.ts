import type { Automation } from "../automations/automation.ts";
import { definitionRows, escapeInvisible, type DefinitionRow } from "../proposals/proposal-definition.ts";
import { PROPOSAL_EXPIRY_MS } from "../proposals/proposal-rules.ts";
import { proposalVersion } from "../proposals/proposal-version.ts";
import type { ProjectAutomation } from "../store/reads/automation-reads.ts";
import { commandButton } from "./controls.ts";
import { exactText } from "./exact-text.ts";
import { html, type SafeHtml } from "./html.ts";
import { automationHref, time } from "./page-layout.ts";

/** Automations the agent proposed that wait for the user's decision. */
export function proposalsOf(automations: ProjectAutomation[]): ProjectAutomation[] {
  return automations.filter((a) => a.proposal !== undefined);
}

/** Home's needs-attention part: each proposal with what it would do, and Approve / Reject. */
export function proposalList(proposals: ProjectAutomation[], now: number, back: string): SafeHtml {
  if (proposals.length === 0) return html``;
  return html`<div class="proposals">${proposals.map((a) => html`<article class="proposal" data-proposal="${a.id}" data-version="${proposalVersion(a, a.triggers)}">
<h3><span class="tag">proposal</span> <a href="${automationHref(a.projectId, a.id)}">${a.title}</a></h3>
${proposalFields(a, now)}
${decisionButtons(a, back, back)}</article>`)}</div>`;
}

/**
 * Approve names the version shown (a hash of the whole definition): if the proposal changed
 * before the plugin applies it, the approval is refused. Reject needs no version.
 */
export function decisionButtons(a: ProjectAutomation, back: string, afterReject: string): SafeHtml {
  const version = proposalVersion(a, a.triggers);
  return html`<p>${commandButton("approve", a.projectId, a.id, back, version)} ${commandButton("reject", a.projectId, a.id, afterReject)}
<span class="small">version ${version.slice(0, 12)}</span></p>`;
}

/** Why, everything it would run or send, in full, who proposed it and until when it waits. */
export function proposalFields(a: ProjectAutomation, now: number): SafeHtml {
  const p = a.proposal!;
  return html`<dl class="fields definition">
<dt>Why</dt><dd class="reason">${p.reason}</dd>
${definitionRows(a, a.triggers).map(row)}
<dt>Proposed by</dt><dd class="proposed-by">${proposedBy(a)}, ${time(p.proposedAt)}</dd>
<dt>Expires</dt><dd>${expiry(a, now)}</dd>
</dl>`;
}

function row(r: DefinitionRow): SafeHtml {
  const key = r.label.toLowerCase().replace(/\s+\d+$/, "").replace(/\s+/g, "-");
  const exact = (r.exact ?? []).map((text) => exactText(text, r.label === "Prompt" ? "pre" : "code"));
  return html`<dt>${r.label}</dt><dd data-field="${key}">${r.text ? html`<span class="what">${escapeInvisible(r.text)}</span>` : ""}${exact}</dd>`;
}

function proposedBy(a: Automation): string {
  return a.proposal!.by === "discovery" ? `discovery (idle-time look for useful work), reporting to session ${a.reportTo}` : `the agent in session ${a.createdBy}`;
}

function expiry(a: Automation, now: number): SafeHtml {
  const at = a.proposal!.proposedAt + PROPOSAL_EXPIRY_MS;
  return at <= now ? html`expired ${time(at)}: removed at OpenCode's next check` : html`${time(at)}, unless approved or rejected before`;
}

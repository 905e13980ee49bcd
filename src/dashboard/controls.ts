import type { CommandKind, InboxCommand } from "../inbox/inbox-command.ts";
import { html, type SafeHtml } from "./html.ts";
import { preview, status, time } from "./page-layout.ts";

/** A pending command nobody claimed for this long is reported as waiting for an OpenCode. */
export const UNCLAIMED_NOTICE_MS = 3000;

const LABELS: Record<CommandKind, string> = {
  cancel_task: "Cancel",
  pause: "Pause",
  resume: "Resume",
  run_now: "Run now",
  delete: "Delete",
  approve: "Approve",
  reject: "Reject",
};

const CONFIRM: Partial<Record<CommandKind, string>> = {
  delete: "Delete this automation?",
  reject: "Reject this proposal? Proposing the same again is refused for a while (option proposalCooldownHours).",
};

/** A button that POSTs a command to the inbox and comes back to `back`; an approval names the version shown. */
export function commandButton(kind: CommandKind, projectId: string, targetId: string, back: string, version?: string): SafeHtml {
  return html`<form class="control" method="post" action="/command">
<input type="hidden" name="kind" value="${kind}"><input type="hidden" name="project" value="${projectId}">
<input type="hidden" name="target" value="${targetId}"><input type="hidden" name="back" value="${back}">${version ? html`<input type="hidden" name="version" value="${version}">` : ""}
<button type="submit" data-kind="${kind}"${CONFIRM[kind] ? html` data-confirm="${CONFIRM[kind]}"` : ""}>${LABELS[kind]}</button></form>`;
}

/** Recent commands (from the page or the command line) with their outcome: pending → done / failed, and who is expected to apply them. */
export function commandList(commands: InboxCommand[], now: number): SafeHtml {
  if (commands.length === 0) return html``;
  return html`<section class="commands"><h2>Commands from the dashboard and the command line</h2><table><thead><tr>
<th>when</th><th>command</th><th>target</th><th>status</th><th>outcome</th></tr></thead><tbody>
${commands.map((c) => html`<tr data-command="${c.id}"><td>${time(c.createdAt)}</td><td>${LABELS[c.kind]}${c.source === "cli" ? html` <span class="small">(command line)</span>` : ""}</td><td class="id">${c.targetId}</td>
<td>${status(c.status)}</td><td>${outcome(c, now)}</td></tr>`)}</tbody></table></section>`;
}

function outcome(c: InboxCommand, now: number): SafeHtml | string {
  if (c.status === "pending") {
    const unclaimed = `Waiting: no OpenCode with project ${c.projectId} open has picked it up. It is applied when one runs.`;
    if (now - c.createdAt >= UNCLAIMED_NOTICE_MS) return unclaimed;
    // app.js switches to the longer text when the time passes with nothing else changing the page.
    return html`<span data-unclaimed-at="${c.createdAt + UNCLAIMED_NOTICE_MS}" data-unclaimed-text="${unclaimed}">Waiting for the OpenCode of this project…</span>`;
  }
  if (c.status === "claimed") return `Being applied by ${c.claimedBy ?? "an OpenCode"}…`;
  return preview(c.outcome, 300);
}

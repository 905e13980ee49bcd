import { formatSpend, formatTokens } from "../cost/format-spend.ts";
import type { Spend } from "../cost/spend.ts";
import { html, type SafeHtml } from "./html.ts";
import { preview, time } from "./page-layout.ts";
import type { ChildRequests, RequestRow, ToolCallRow } from "./request-rows.ts";

/** A spend in the one format (`$0.081 · 15.0k tok`), "-" before the first request. */
export function spendText(spend: Spend | undefined): string {
  return spend && spend.requests > 0 ? formatSpend(spend) : "-";
}

/** The task page's Spent field: the tree's spend, and its own when it launched tasks that spent too. */
export function spentField(own: Spend | undefined, tree: Spend | undefined): SafeHtml {
  if (!tree || tree.requests === 0) return html`<span class="none">nothing yet</span>`;
  const requests = (s: Spend) => `${s.requests} request${s.requests === 1 ? "" : "s"}`;
  if (!own || own.requests === tree.requests) return html`<span class="spend">${formatSpend(tree)}</span> in ${requests(tree)}`;
  return html`<span class="spend">${formatSpend(tree)}</span> in ${requests(tree)} with the tasks it launched; its own: ${formatSpend(own)} in ${requests(own)}`;
}

/** Where the money went: each model request of the child in order, its tokens, cost and tool calls (collapsed). */
export function requestsSection(requests: ChildRequests): SafeHtml {
  const note = requests.note ? html`<p class="note" id="requests-note">${requests.note}</p>` : "";
  const earlier = requests.earlier ? html`<p class="note">${requests.earlier} earlier requests not shown.</p>` : "";
  if (requests.rows.length === 0) return html`<h2>Model requests</h2>${note}<p class="none" id="requests">None yet.</p>`;
  const detailed = requests.from === "session";
  return html`<h2>Model requests</h2>${note}${earlier}<table class="requests" id="requests"><thead><tr><th>#</th>${detailed ? html`<th>when</th><th>model</th>` : ""}<th>spent</th><th>tokens by kind</th>${detailed ? html`<th>tool calls</th>` : ""}</tr></thead><tbody>
${requests.rows.map((r, i) => requestRow(r, requests.earlier + i + 1, detailed))}</tbody></table>`;
}

function requestRow(r: RequestRow, n: number, detailed: boolean): SafeHtml {
  const spent = r.spend ? formatSpend(r.spend) : html`<span class="none">${r.ended ? "none reported" : "in progress"}</span>`;
  const details = detailed ? html`<td>${time(r.at)}</td><td>${r.model ?? "-"}${r.compaction ? " (compaction)" : ""}</td>` : "";
  return html`<tr data-request="${r.messageId}"><td>${n}</td>${details}<td class="spend">${spent}</td><td>${r.spend ? byKind(r.spend) : "-"}</td>${detailed ? html`<td>${toolCalls(r.tools)}</td>` : ""}</tr>`;
}

function byKind(spend: Spend): string {
  const t = spend.tokens;
  const parts = [`in ${formatTokens(t.input)}`, `out ${formatTokens(t.output)}`];
  if (t.reasoning) parts.push(`reasoning ${formatTokens(t.reasoning)}`);
  if (t.cacheRead || t.cacheWrite) parts.push(`cache ${formatTokens(t.cacheRead)} read, ${formatTokens(t.cacheWrite)} written`);
  return parts.join(" · ");
}

function toolCalls(tools: ToolCallRow[]): SafeHtml | string {
  if (tools.length === 0) return html`<span class="none">none</span>`;
  return html`${tools.map((t) => html`<details class="tool-call" data-key="${t.callID}"><summary>${t.tool} <span class="status s-${t.status}">${t.status}</span> ${preview(t.input, 80)}</summary>
<div class="small">input</div><pre class="text">${t.input}</pre>${t.output !== undefined ? html`<div class="small">output</div><pre class="text">${t.output}</pre>` : ""}</details>`)}`;
}

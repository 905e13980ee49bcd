import { UNSETTLED_STATUSES } from "../core/task.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import type { TaskEvent } from "../core/task-store.ts";
import { evidenceDetails } from "../evidence/evidence-summary.ts";
import type { RunEvidence } from "../evidence/evidence-types.ts";
import { whereText } from "../core/placement.ts";
import type { ProjectRef } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import { workerUnhealthy, type ProjectWorker } from "../store/reads/worker-reads.ts";
import type { InboxCommand } from "../inbox/inbox-command.ts";
import { commandButton, commandList } from "./controls.ts";
import { html, type SafeHtml } from "./html.ts";
import { automationHref, duration, elapsed, layout, projectName, status, taskHref, time } from "./page-layout.ts";
import { healthLine } from "./worker-view.ts";
import type { Spend } from "../cost/spend.ts";
import type { ChildRequests } from "./request-rows.ts";
import { requestsSection, spendText, spentField } from "./spend-view.ts";

export type TaskData = {
  task: ProjectTask; events: TaskEvent[]; evidence: RunEvidence[]; commands: InboxCommand[];
  /** The worker it runs on as last seen; absent when local, or when its project's OpenCode recorded none by that name. */
  worker?: ProjectWorker;
  /** The task whose child launched this one, when it was launched from inside a background task. */
  launchedBy?: ProjectTask;
  /** The automation run it is in: the newest run linked to it (a continued session spans several). */
  run?: { automationId: string; runNo: number };
  /** Tasks this one's child launched, and theirs, in tree order. */
  below?: { task: ProjectTask; depth: number }[];
  /** Its own spend (its child's requests) and with its descendants'; absent before the first request. */
  spend?: { own?: Spend; tree?: Spend };
  /** Each task below's spend with its own descendants', by task id. */
  belowSpend?: Map<string, Spend>;
  /** The child's model requests in order: where the money went. */
  requests?: ChildRequests;
};

export function taskPage(data: TaskData, frame: { projects: ProjectRef[]; project?: string; path: string }, now: number): SafeHtml {
  const t = data.task;
  const run = data.run;
  const evidence = data.evidence.map(evidenceDetails).filter((text) => !/Files: none\n  Commands: none\n  Failed tools: none$/.test(text));
  const body = html`
<h1>${t.description}</h1>
<dl class="fields">
<dt>Task</dt><dd class="id">${t.id}</dd>
<dt>Status</dt><dd id="task-status">${status(t.status)} ${UNSETTLED_STATUSES.includes(t.status) ? commandButton("cancel_task", t.projectId, t.id, frame.path) : ""}</dd>
<dt>Runs on</dt><dd id="task-where">${where(t, data.worker)}</dd>
<dt>Project</dt><dd>${projectName(frame.projects, t.projectId)}</dd>
<dt>Agent</dt><dd>${t.agent} (${t.model.providerID}/${t.model.modelID})</dd>
<dt>Parent session</dt><dd class="id">${t.parentSessionID}${data.launchedBy ? html` — launched by <a href="${taskHref(t.projectId, data.launchedBy.id)}">task “${data.launchedBy.description}”</a>` : ""}</dd>
<dt>Batch</dt><dd class="id">${t.batchId}${run ? html` — run ${run.runNo} of <a href="${automationHref(t.projectId, run.automationId)}">automation ${run.automationId}</a>` : ""}</dd>
<dt>Created</dt><dd>${time(t.createdAt)}</dd>
<dt>Started</dt><dd>${time(t.startedAt)}</dd>
<dt>Settled</dt><dd>${time(t.settledAt)} (${UNSETTLED_STATUSES.includes(t.status) ? html`running for ${elapsed(t.startedAt ?? t.createdAt, now)}` : `took ${duration(t.startedAt ?? t.createdAt, t.settledAt)}`})</dd>
<dt>Spent</dt><dd id="task-spend">${spentField(data.spend?.own, data.spend?.tree)}</dd>
<dt>Progress</dt><dd>${t.progress.toolCalls} tool calls${t.progress.lastTools.length ? `, last: ${t.progress.lastTools.join(", ")}` : ""}</dd>
<dt>Open in OpenCode</dt><dd><code>opencode --session ${t.id}</code> ${t.worker ? `on worker ${t.worker}${data.worker ? ` (${data.worker.host})` : ""}, in its checkout of the project` : "(in the project's directory)"}</dd>
</dl>
${commandList(data.commands.filter((c) => c.targetId === t.id), now)}
<h2>Prompt</h2><pre class="text" id="prompt">${maskSecrets(t.prompt)}</pre>
${t.result !== undefined ? html`<h2>Result</h2><pre class="text" id="result">${maskSecrets(t.result)}</pre>` : ""}
${t.error !== undefined ? html`<h2>Error</h2><pre class="text error" id="error">${maskSecrets(t.error)}</pre>` : ""}
${t.result === undefined && t.error === undefined ? html`<h2>Result</h2><p class="none" id="result">None yet.</p>` : ""}
${evidence.length ? html`<h2>Evidence</h2><pre class="text" id="evidence">${evidence.join("\n")}</pre>` : ""}
${tree(t.projectId, data.below ?? [], data.belowSpend)}
${data.requests ? requestsSection(data.requests) : ""}
<h2>Timeline</h2>${timeline(data.events, t.createdAt)}`;
  return layout({ ...frame, title: t.description }, body);
}

/** "local", or the worker with its host and health; a child held on an unhealthy worker says so. */
function where(t: ProjectTask, worker: ProjectWorker | undefined): SafeHtml | string {
  if (!t.worker || !worker) return whereText(t);
  const held = workerUnhealthy(worker) && UNSETTLED_STATUSES.includes(t.status);
  return html`${whereText(t)} <span class="id">${worker.host}</span> — ${healthLine(worker)}${held ? html`<br><strong class="s-error worker-held">Held: it goes on if the worker answers again within the grace period (workerGraceSeconds), else it settles as error.</strong>` : ""}`;
}

/** Background tasks of its own: each under the task that launched it (indented by data-depth: the CSP allows no style attribute). */
function tree(projectId: string, below: { task: ProjectTask; depth: number }[], spend = new Map<string, Spend>()): SafeHtml | string {
  if (below.length === 0) return "";
  const rows = below.map(({ task, depth }) => html`<li data-depth="${String(Math.min(depth, 8))}">└ <a href="${taskHref(projectId, task.id)}" class="id">${task.id}</a> ${status(task.status)} ${task.description} <span class="spend">${spendText(spend.get(task.id))}</span></li>`);
  return html`<h2>Its own background tasks</h2><ul class="task-tree" id="task-tree">${rows}</ul>`;
}

function timeline(events: TaskEvent[], start: number): SafeHtml {
  if (events.length === 0) return html`<p class="none">No events.</p>`;
  return html`<table class="timeline"><tbody>${events.map((e) => html`<tr><td>${time(e.at)}</td><td>+${duration(start, e.at)}</td><td>${e.kind}</td><td>${e.detail ?? ""}</td></tr>`)}</tbody></table>`;
}

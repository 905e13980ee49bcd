import { DAY_MS } from "../core/clock.ts";
import { skippedText } from "../automations/automation-text.ts";
import { isEventSpec, runName, type Run, type Trigger } from "../automations/automation.ts";
import type { Step, StepResult } from "../automations/step-spec.ts";
import { stepLine } from "../automations/step-text.ts";
import { describeTrigger, nextOccurrence } from "../automations/trigger-spec.ts";
import type { InboxCommand } from "../inbox/inbox-command.ts";
import { commandButton, commandList } from "./controls.ts";
import type { ProjectAutomation, RunFilter, RunWithTask } from "../store/reads/automation-reads.ts";
import type { ProjectRef, ReadModel } from "../store/reads/read-model.ts";
import { durationChart } from "./duration-chart.ts";
import { automationState } from "./home-page.ts";
import { runWhere } from "./worker-view.ts";
import { decisionButtons, proposalFields } from "./proposal-view.ts";
import { proposalVersion } from "../proposals/proposal-version.ts";
import { escapeInvisible, triggerInFull } from "../proposals/proposal-definition.ts";
import { exactText } from "./exact-text.ts";
import type { Spend } from "../cost/spend.ts";
import { spendKey } from "../store/reads/spend-reads.ts";
import { spendText } from "./spend-view.ts";
import { html, type SafeHtml } from "./html.ts";
import type { RunDay } from "../store/run-history-fold.ts";
import { runDayText } from "../automations/run-day-text.ts";
import { duration, layout, preview, projectName, status, taskHref, time } from "./page-layout.ts";

const NEXT_SHOWN = 3;
const RUN_STATUSES = ["completed", "error", "cancelled", "running", "starting", "waiting", "skipped", "missed"];

export type AutomationData = {
  automation: ProjectAutomation;
  runs: RunWithTask[];
  chartRuns: Run[];
  filter: { status: string; trigger: string; from: string; to: string };
  commands: InboxCommand[];
  /** Webhook deliveries stored and not yet fired, by trigger id (none run while no process of the project runs). */
  waiting: Map<string, number>;
  /** Each run's task's spend with its descendants', by task id. */
  spend: Map<string, Spend>;
  /** Older quiet runs folded by UTC day (option historyRuns), newest first. */
  days: RunDay[];
};

export function readAutomation(reader: ReadModel, project: string, params: URLSearchParams): AutomationData | undefined {
  const automation = reader.automations.get(project, params.get("id") ?? "");
  if (!automation) return undefined;
  const filter = { status: params.get("status") ?? "", trigger: params.get("trigger") ?? "", from: params.get("from") ?? "", to: params.get("to") ?? "" };
  const query: RunFilter = { status: filter.status || undefined, trigger: filter.trigger || undefined, from: day(filter.from), to: plusDay(day(filter.to)) };
  const commands = reader.commands(project, 20).filter((c) => c.targetId === automation.id);
  const waiting = new Map(reader.automations.webhooks(project).filter((w) => w.automationId === automation.id).map((w) => [w.triggerId, w.waiting]));
  const runs = reader.automations.runs(project, automation.id, query);
  return {
    automation, runs, chartRuns: reader.automations.runs(project, automation.id, { limit: 60 }), filter, commands: commands.slice(0, 5), waiting,
    spend: runSpend(reader, project, runs), days: reader.automations.runDays(project, automation.id),
  };
}

/** A run's spend is its task's, with the tasks it launched. */
function runSpend(reader: ReadModel, project: string, runs: Run[]): Map<string, Spend> {
  const ids = [...new Set(runs.flatMap((r) => (r.taskId ? [r.taskId] : [])))];
  const trees = reader.spend.trees(ids.map((id) => ({ projectId: project, id })));
  return new Map(ids.flatMap((id) => (trees.has(spendKey(project, id)) ? [[id, trees.get(spendKey(project, id))!] as const] : [])));
}

export function automationPage(data: AutomationData, frame: { projects: ProjectRef[]; project?: string; path: string }, now: number): SafeHtml {
  const a = data.automation;
  const back = frame.path;
  const body = html`
<h1>${a.title}</h1>
<div id="automation-controls" data-live>
${a.proposal ? proposalControls(a, now, back) : controls(a, back)}
${commandList(data.commands, now)}</div>
<div id="automation-details" data-live><dl class="fields">
<dt>Automation</dt><dd class="id">${a.id}</dd>
<dt>Project</dt><dd>${projectName(frame.projects, a.projectId)}</dd>
<dt>Agent</dt><dd>${a.agent}${a.model ? ` (${a.model.providerID}/${a.model.modelID})` : ""}</dd>
${a.worker ? html`<dt>Worker</dt><dd id="automation-worker">${workerChoice(a.worker)}</dd>` : ""}
<dt>Notify</dt><dd>${a.notify}, reporting to <span class="id">${a.reportTo}</span>${a.reportToGoneAt !== undefined ? html` <strong class="s-error">(that session was deleted)</strong>` : ""}</dd>
<dt>Session</dt><dd>${a.sessionMode}${a.continueTaskId ? html` (<a href="${taskHref(a.projectId, a.continueTaskId)}">${a.continueTaskId}</a>)` : ""}</dd>
<dt>Overlap / catch-up</dt><dd>${a.overlap} / ${a.catchUp}</dd>
<dt>Runs</dt><dd>${a.runCount}${a.maxRuns !== undefined ? ` of at most ${a.maxRuns}` : ""}</dd>
<dt>Failure streak</dt><dd id="failure-streak">${a.consecutiveFailures} consecutive failed run${a.consecutiveFailures === 1 ? "" : "s"}</dd>
<dt>Created</dt><dd>${time(a.createdAt)}</dd>
</dl>
${a.steps?.length ? html`<h2>Steps</h2>${stepDefinitions(a.steps)}` : ""}
<h2>Prompt</h2>${a.prompt && a.steps?.length ? html`<p class="prompt-when">${a.promptWhen === "always" ? "Runs after the steps on every run (prompt_when always)." : "Runs only when a step fails (prompt_when failure); when all pass, the run ends with their summary and no model."}</p>` : ""}${a.prompt ? html`<pre class="text">${a.prompt}</pre>` : html`<p class="none">None: steps only, no model runs.</p>`}
<h2>Triggers</h2>${triggerTable(a.triggers, a.enabled && a.doneAt === undefined, now, data.waiting)}</div>
<h2>Durations and outcomes</h2><div id="chart-box" data-live>${durationChart(data.chartRuns, now)}</div>
<h2>Run history</h2>${filterForm(data, a.triggers)}
<div id="history" data-live>${runTable(data.runs, a.projectId, now, back, data.spend)}${a.sessionMode === "continue" && data.runs.length ? html`<p class="note">Runs of a continued session share one task: each shows that session's spend so far.</p>` : ""}${foldedDays(data.days)}</div>`;
  return layout({ ...frame, liveMain: false, title: a.title, attention: a.proposal || a.pausedReason || a.reportToGoneAt !== undefined ? 1 : 0 }, body);
}

/** Older quiet runs, one line per automation and UTC day: what the history keeps of them. */
function foldedDays(days: RunDay[]): SafeHtml | string {
  if (days.length === 0) return "";
  return html`<h3>Older quiet runs, by day (UTC)</h3><ul id="folded-days">${days.map((d) => html`<li data-day="${d.day}">${runDayText(d)}</li>`)}</ul>
<p class="note">Each automation keeps its newest runs (option historyRuns) and every failed or told run whole; older quiet runs are counted here.</p>`;
}

function controls(a: ProjectAutomation, back: string): SafeHtml {
  return html`<p>${status(automationState(a))} ${a.pausedReason ? html`— <span id="paused-reason">${a.pausedReason}</span>` : ""}
${a.enabled ? commandButton("pause", a.projectId, a.id, back) : commandButton("resume", a.projectId, a.id, back)}
${commandButton("run_now", a.projectId, a.id, back)} ${commandButton("delete", a.projectId, a.id, "/")}</p>`;
}

/** A proposal is not paused: it waits for the user's decision, and nothing runs before it. */
function proposalControls(a: ProjectAutomation, now: number, back: string): SafeHtml {
  return html`<div class="proposal" data-proposal="${a.id}" data-version="${proposalVersion(a, a.triggers)}"><p>${status("proposed")} — <span id="proposal-note">a proposal from the agent, waiting for your decision: nothing runs until you approve it.</span></p>
${proposalFields(a, now)}
${decisionButtons(a, back, "/")}</div>`;
}

function triggerTable(triggers: Trigger[], active: boolean, now: number, waiting: Map<string, number>): SafeHtml {
  if (triggers.length === 0) return html`<p class="none">No triggers: it runs only with "Run now".</p>`;
  return html`<table><thead><tr><th>trigger</th><th>next runs (your time zone)</th></tr></thead><tbody>
${triggers.map((t) => html`<tr><td>${triggerCell(t)}<div class="id">${t.id}</div></td><td>${active ? whenNext(t, now, waiting.get(t.id) ?? 0) : "-"}</td></tr>`)}</tbody></table>`;
}

/** The trigger in full: a command trigger's command whole, its whitespace visible. */
function triggerCell(t: Trigger): SafeHtml {
  const { text, exact } = triggerInFull(t.spec);
  return html`${text ? escapeInvisible(text) : ""}${(exact ?? []).map((e) => html` ${exactText(e)}`)}`;
}

/** Schedules list their next times; event triggers say they wait for their event, and what their source reports. */
function whenNext(t: Trigger, now: number, waiting: number): SafeHtml {
  if (!isEventSpec(t.spec)) return html`${nextTimes(t, now).map((at) => html`${time(at)}<br>`)}`;
  return html`when it happens${t.note ? html`<br><span class="note">${t.note}</span>` : ""}${waiting ? html`<br><span class="note">${waiting} webhook deliveries wait for an OpenCode process of this project</span>` : ""}`;
}

function nextTimes(t: Trigger, now: number): number[] {
  const times: number[] = [];
  let at = t.nextAt;
  while (at !== undefined && times.length < NEXT_SHOWN) {
    times.push(at);
    at = nextOccurrence(t, Math.max(at, now));
  }
  return times;
}

function filterForm(data: AutomationData, triggers: Trigger[]): SafeHtml {
  const f = data.filter;
  const opt = (value: string, label: string, current: string) => html`<option value="${value}"${value === current ? html` selected` : ""}>${label}</option>`;
  return html`<form class="filters" method="get" action="/automation">
<input type="hidden" name="project" value="${data.automation.projectId}"><input type="hidden" name="id" value="${data.automation.id}">
<label>Status <select name="status">${opt("", "any", f.status)}${RUN_STATUSES.map((s) => opt(s, s, f.status))}</select></label>
<label>Trigger <select name="trigger">${opt("", "any", f.trigger)}${opt("manual", "run now (manual)", f.trigger)}${triggers.map((t) => opt(t.id, describeTrigger(t.spec), f.trigger))}</select></label>
<label>From <input type="date" name="from" value="${f.from}"></label><label>To <input type="date" name="to" value="${f.to}"></label>
<button type="submit">Filter</button></form>`;
}

/** Where its runs' children go: a named worker, or auto. */
function workerChoice(worker: string): string {
  return worker === "auto" ? "auto: this OpenCode until its slots are full, then the healthy worker with the most free capacity" : `worker ${worker}`;
}

function runTable(runs: RunWithTask[], projectId: string, now: number, back: string, spend: Map<string, Spend>): SafeHtml {
  if (runs.length === 0) return html`<p class="none">No runs match.</p>`;
  return html`<table class="runs"><thead><tr><th>run</th><th>fired by</th><th>status</th><th>started</th><th>took</th><th>spent</th><th>summary</th></tr></thead><tbody>
${runs.map((r) => html`<tr data-run="${r.id}"><td>${r.taskId ? html`<a href="${taskHref(projectId, r.taskId)}">#${r.runNo ?? "-"}</a>` : `#${r.runNo ?? "-"}`}${runWhere(r)}</td>
<td>${r.firedBy}${r.eventSummary ? html`: ${r.eventSummary}${r.eventFolded ? ` (+${r.eventFolded} folded)` : ""}` : ""}</td><td>${status(r.status)}${inSteps(r) ? html` ${commandButton("cancel_task", projectId, runName(r.automationId, r.runNo!), back)}` : ""}</td><td>${time(r.startedAt ?? r.plannedAt ?? r.createdAt)}</td>
<td>${r.startedAt !== undefined ? duration(r.startedAt, r.endedAt ?? now) : "-"}</td>
<td class="spend">${spendText(r.taskId ? spend.get(r.taskId) : undefined)}</td>
<td>${preview(r.summary ?? (r.missedCount ? `${r.missedCount} occurrence(s) missed` : r.status === "skipped" ? skippedText(r) : r.skipReason), 160)}${r.steps?.length ? stepResults(r.steps) : ""}</td></tr>`)}</tbody></table>`;
}

/** A run still in its steps phase (no task yet): its Cancel kills the running step. */
function inSteps(r: Run): boolean {
  return r.status === "running" && r.taskId === undefined && r.stepsBy !== undefined && r.runNo !== undefined;
}

function stepDefinitions(steps: Step[]): SafeHtml {
  return html`<table class="step-defs"><thead><tr><th>step</th><th>command (sh -c in the project)</th><th>timeout</th><th>on failure</th></tr></thead><tbody>
${steps.map((s) => html`<tr><td>${s.name}</td><td>${exactText(s.run)}</td><td>${s.timeout ?? "5m"}</td><td>${s.retries ? `try ${s.retries} more time(s), ${s.retryDelay ?? "5s"} apart, then ` : ""}${s.continueOnError ? "continue" : "stop"}</td></tr>`)}</tbody></table>`;
}

/** Each step's status, exit code and time, its output's last lines folded under it. */
function stepResults(steps: StepResult[]): SafeHtml {
  return html`<ul class="steps">${steps.map((s) => html`<li data-step="${s.name}">${status(s.status)} ${stepLine(s)}${(s.tries ?? []).map((t, i) => (t.tail ? html`<details data-try="${i + 1}"><summary>output of try ${i + 1}</summary><pre>${t.tail}</pre></details>` : ""))}${s.tail ? html`<details><summary>output${s.tries?.length ? ` of try ${s.tries.length + 1}` : ""}</summary><pre>${s.tail}</pre></details>` : ""}</li>`)}</ul>`;
}

/** "YYYY-MM-DD" as the start of that day (local), or undefined. */
function day(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const ms = new Date(`${text}T00:00:00`).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

function plusDay(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : ms + DAY_MS;
}

import { DAY_MS } from "../core/clock.ts";
import { skippedText } from "../automations/automation-text.ts";
import type { InboxCommand } from "../inbox/inbox-command.ts";
import { commandButton, commandList } from "./controls.ts";
import type { ProjectAutomation, ProjectRun } from "../store/reads/automation-reads.ts";
import type { ProjectRef, ReadModel } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import type { ProjectWorker } from "../store/reads/worker-reads.ts";
import { html, type SafeHtml } from "./html.ts";
import { automationHref, duration, elapsed, layout, preview, status, taskHref, time } from "./page-layout.ts";
import { proposalList, proposalsOf } from "./proposal-view.ts";
import { spendDays, type SpendDays } from "./spend-days.ts";
import { dailyBudgetState, startOfLocalDay } from "../cost/daily-budget.ts";
import { formatUsd } from "../cost/format-spend.ts";
import type { Spend } from "../cost/spend.ts";
import { spendKey } from "../store/reads/spend-reads.ts";
import { spendChart } from "./spend-chart.ts";
import { spendText } from "./spend-view.ts";
import { indexWorkers, runWhere, whereCell, workerAttention, workerOf, workersSection, type WorkerIndex } from "./worker-view.ts";

export type AttentionItem = { kind: string; text: string | SafeHtml; href: string; at?: number };

export type HomeData = {
  active: ProjectTask[];
  recent: ProjectTask[];
  attention: AttentionItem[];
  /** Proposals waiting for the user: listed under needs attention with their own controls. */
  proposals: ProjectAutomation[];
  automations: ProjectAutomation[];
  runs: ProjectRun[];
  commands: InboxCommand[];
  permissions: Map<string, { title: string; at: number }>;
  /** Other OpenCode servers running children (option workers); empty when the project has none. */
  workers: ProjectWorker[];
  /** Each listed task's spend with its descendants', and each listed run's task's, by `spendKey`. */
  spend: Map<string, Spend>;
  /** The last 30 days' spend per day, by automation and by model, for the charts. */
  days: SpendDays;
  /** What background work of every project launched today cost, and the serving OpenCode's dailyBudgetUsd (0: none known). */
  today: { spent: Spend; limitUsd: number };
};

/** `dailyBudgetUsd`: the serving OpenCode's option (0 or absent: none known, from the command line). */
export function readHome(reader: ReadModel, project: string | undefined, now: number, dailyBudgetUsd = 0): HomeData {
  const automations = reader.automations.list(project);
  const workers = reader.workers.list(project);
  const active = reader.tasks.active(project);
  const permissions = reader.tasks.permissionWaits(active);
  const waiting = active.filter((t) => permissions.has(t.id)).map((t) => ({
    kind: "permission", text: `${t.description} is waiting for permission: ${permissions.get(t.id)!.title} (answer it in OpenCode)`,
    href: taskHref(t.projectId, t.id), at: permissions.get(t.id)!.at,
  }));
  const recent = reader.tasks.recent(project);
  const runs = reader.automations.recentRuns(project);
  const runTasks = runs.flatMap((r) => (r.taskId ? [{ projectId: r.projectId, id: r.taskId }] : []));
  return {
    active,
    permissions,
    recent,
    attention: [...workerAttention(workers), ...waiting, ...attention(reader, automations, project, now - DAY_MS), ...budgetAttention(reader, project, now, dailyBudgetUsd)],
    proposals: proposalsOf(automations),
    automations,
    runs,
    commands: reader.commands(project, 10),
    workers,
    spend: reader.spend.trees([...active, ...recent, ...runTasks]),
    days: spendDays(reader, project, now),
    today: { spent: reader.spend.spentSince(startOfLocalDay(now)), limitUsd: dailyBudgetUsd },
  };
}

/** The machine's daily budget reached (all projects), and automations that skipped firings for their own daily budget. */
function budgetAttention(reader: ReadModel, project: string | undefined, now: number, dailyBudgetUsd: number): AttentionItem[] {
  const today = dailyBudgetState(reader.spend, { dailyBudgetUsd }, now);
  const machine: AttentionItem[] = today.reached && today.limitUsd !== undefined ? [{
    kind: "budget", href: "#spend",
    text: `Daily budget reached: ${formatUsd(today.spentUsd)} of ${formatUsd(today.limitUsd)} spent today by background work (option dailyBudgetUsd, all projects). New tasks are refused and queued ones wait until tomorrow or a raised budget.`,
  }] : [];
  return [...machine, ...reader.spend.budgetSkips(now - DAY_MS, project).map((s) => ({
    kind: "budget", text: `${s.title ?? s.automationId}: ${s.count} firing${s.count === 1 ? "" : "s"} skipped, ${s.reason}`, href: automationHref(s.projectId, s.automationId), at: s.at,
  }))];
}

/** Failed runs of the last day, paused automations with the reason, channel deliveries given up, evidence flags, report-to sessions gone. */
function attention(reader: ReadModel, automations: ProjectAutomation[], project: string | undefined, since: number): AttentionItem[] {
  const items: AttentionItem[] = [];
  for (const t of reader.tasks.failedSince(since, project)) {
    items.push({ kind: "failed", text: `${t.description}: ${preview(t.error, 160)}`, href: taskHref(t.projectId, t.id), at: t.settledAt });
  }
  for (const a of automations) {
    const href = automationHref(a.projectId, a.id);
    if (!a.enabled && a.pausedReason) items.push({ kind: "paused", text: `${a.title}: ${a.pausedReason}`, href, at: a.updatedAt });
    if (a.reportToGoneAt !== undefined) items.push({ kind: "report-to gone", text: `${a.title}: the session it reports to (${a.reportTo}) was deleted`, href, at: a.reportToGoneAt });
  }
  for (const f of reader.automations.channelFailures(since, project)) {
    const text = `${f.title ?? f.automationId} run #${f.runNo ?? "?"}: not delivered to ${f.channel} (${f.host}) after ${f.attempts} attempts: ${f.lastError ?? "unknown"}`;
    items.push({ kind: "channel", text, href: automationHref(f.projectId, f.automationId), at: f.endedAt });
  }
  for (const flag of reader.tasks.evidenceFlags(since, project)) {
    items.push({ kind: "evidence", text: `${flag.task.description}: ${flag.message}`, href: taskHref(flag.task.projectId, flag.task.id), at: flag.task.settledAt });
  }
  return items;
}

export function homePage(data: HomeData, frame: { projects: ProjectRef[]; project?: string; path: string }, now: number): SafeHtml {
  const back = frame.path;
  const attention = data.attention.length + data.proposals.length;
  const workers = indexWorkers(data.workers);
  const body = html`
<section id="active"><h2>Running and queued (${data.active.length})</h2>${data.active.length ? taskTable(data.active, now, back, workers, data.spend, data.permissions) : html`<p class="none">Nothing running.</p>`}</section>
<section id="attention"><h2>Needs attention (${attention})</h2>${proposalList(data.proposals, now, back)}${data.attention.length || !data.proposals.length ? attentionList(data.attention) : ""}</section>
${workersSection(data.workers, frame.projects)}
${commandList(data.commands, now)}
<section id="spend"><h2>Spend, the last 30 days</h2><p id="spend-today">Today, all projects: ${data.today.spent.requests ? spendText(data.today.spent) : "nothing"}${data.today.limitUsd > 0 ? ` (dailyBudgetUsd: ${formatUsd(data.today.limitUsd)})` : ""} spent by background work.</p><h3>By automation</h3>${spendChart(data.days.byAutomation, data.days.days, "spend-by-automation", "automation")}
<h3>By model</h3>${spendChart(data.days.byModel, data.days.days, "spend-by-model", "model")}</section>
<section id="automations"><h2>Automations (${data.automations.length})</h2>${automationTable(data.automations)}</section>
<section id="runs"><h2>Recent automation runs</h2>${runTable(data.runs, data.spend)}</section>
<section id="recent"><h2>Recent tasks</h2>${data.recent.length ? taskTable(data.recent, now, back, workers, data.spend) : html`<p class="none">No finished tasks.</p>`}</section>`;
  return layout({ ...frame, title: "Home", attention, proposals: data.proposals.length }, body);
}

/** Running tasks (with `permissions`: progress and Cancel) or settled ones (result and time taken). */
function taskTable(tasks: ProjectTask[], now: number, back: string, workers: WorkerIndex, spend: HomeData["spend"], permissions?: HomeData["permissions"]): SafeHtml {
  const live = permissions !== undefined;
  return html`<table class="tasks"><thead><tr><th>task</th><th>runs on</th><th>status</th><th>${live ? "progress" : "result"}</th><th>${live ? "running for" : "took"}</th><th>spent</th>${live ? html`<th></th>` : ""}</tr></thead><tbody>
${tasks.map((t) => html`<tr data-task="${t.id}"><td><a href="${taskHref(t.projectId, t.id)}">${t.description}</a><div class="id">${t.id}</div></td>
<td>${whereCell(t, workerOf(workers, t))}</td>
<td class="task-status">${status(t.status)}</td>
<td>${live ? progress(t, now, permissions.get(t.id)?.title) : preview(t.error ?? t.result)}</td>
<td>${live ? elapsed(t.startedAt ?? t.createdAt, now) : duration(t.startedAt ?? t.createdAt, t.settledAt)}</td>
<td class="spend">${spendText(spend.get(spendKey(t.projectId, t.id)))}</td>
${live ? html`<td>${commandButton("cancel_task", t.projectId, t.id, back)}</td>` : ""}</tr>`)}</tbody></table>`;
}

function progress(t: ProjectTask, now: number, permission: string | undefined): SafeHtml {
  const { toolCalls, lastTools, lastActivityAt } = t.progress;
  const waiting = permission ? html`<strong class="s-pending permission">waiting for permission: ${permission}</strong><br>` : "";
  const tools = lastTools.length ? `, last: ${lastTools.join(", ")}` : "";
  return html`${waiting}${toolCalls} tool call${toolCalls === 1 ? "" : "s"}${tools}; active ${duration(lastActivityAt, now)} ago`;
}

function attentionList(items: AttentionItem[]): SafeHtml {
  if (items.length === 0) return html`<p class="none">Nothing needs attention.</p>`;
  return html`<ul class="attention">${items.map((i) => html`<li><span class="tag">${i.kind}</span> <a href="${i.href}">${i.text}</a>${i.at !== undefined ? html` ${time(i.at)}` : ""}</li>`)}</ul>`;
}

function automationTable(automations: ProjectAutomation[]): SafeHtml {
  if (automations.length === 0) return html`<p class="none">No automations.</p>`;
  return html`<table><thead><tr><th>automation</th><th>state</th><th>next run</th><th>last run</th></tr></thead><tbody>
${automations.map((a) => html`<tr data-automation="${a.id}"><td><a href="${automationHref(a.projectId, a.id)}">${a.title}</a><div class="id">${a.id}</div></td>
<td>${status(automationState(a))}</td>
<td>${a.enabled && a.doneAt === undefined ? time(nextRun(a)) : "-"}</td>
<td>${a.lastRun ? html`${status(a.lastRun.status)} ${time(a.lastRun.endedAt ?? a.lastRun.createdAt)}` : "never"}</td></tr>`)}</tbody></table>`;
}

/** proposed (waiting for the user) / done / enabled / paused. */
export function automationState(a: ProjectAutomation): string {
  return a.proposal ? "proposed" : a.doneAt !== undefined ? "done" : a.enabled ? "enabled" : "paused";
}

export function nextRun(a: ProjectAutomation): number | undefined {
  const times = a.triggers.map((t) => t.nextAt).filter((n): n is number => n !== undefined);
  return times.length ? Math.min(...times) : undefined;
}

function runTable(runs: ProjectRun[], spend: HomeData["spend"]): SafeHtml {
  if (runs.length === 0) return html`<p class="none">No runs yet.</p>`;
  return html`<table><thead><tr><th>automation</th><th>run</th><th>status</th><th>when</th><th>spent</th><th>summary</th></tr></thead><tbody>
${runs.map((r) => html`<tr><td><a href="${automationHref(r.projectId, r.automationId)}">${r.title ?? r.automationId}</a></td><td>${r.runNo ?? "-"} (${r.firedBy})${runWhere(r)}</td>
<td>${status(r.status)}</td><td>${time(r.startedAt ?? r.createdAt)}</td><td class="spend">${spendText(r.taskId ? spend.get(spendKey(r.projectId, r.taskId)) : undefined)}</td><td>${preview(r.summary ?? (r.status === "skipped" ? skippedText(r) : r.skipReason))}</td></tr>`)}</tbody></table>`;
}

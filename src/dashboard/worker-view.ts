import { whereText } from "../core/placement.ts";
import { UNSETTLED_STATUSES } from "../core/task.ts";
import type { ProjectRef } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import { workerUnhealthy, type ProjectWorker } from "../store/reads/worker-reads.ts";
import { html, type SafeHtml } from "./html.ts";
import { preview, projectName, status, time } from "./page-layout.ts";

/** Workers by project and name, to look up the one a task runs on. */
export type WorkerIndex = Map<string, ProjectWorker>;

export function indexWorkers(workers: ProjectWorker[]): WorkerIndex {
  return new Map(workers.map((w) => [key(w.projectId, w.name), w]));
}

export function workerOf(index: WorkerIndex, task: Pick<ProjectTask, "projectId" | "worker">): ProjectWorker | undefined {
  return task.worker === undefined ? undefined : index.get(key(task.projectId, task.worker));
}

/** "unreachable since <time> (why)"; "healthy since <time>"; "not checked yet". */
export function healthLine(w: ProjectWorker): SafeHtml {
  if (w.state === "unknown") return html`${status("unknown")} not checked yet`;
  return html`${status(w.state)} since ${time(w.since)}${w.error ? html` <span class="small">(${preview(w.error, 200)})</span>` : ""}`;
}

/**
 * Where a task runs: "local" or "worker box"; a task still going on a worker that is not healthy
 * says so (its child is held, not failed, for the grace period).
 */
export function whereCell(task: ProjectTask, worker: ProjectWorker | undefined): SafeHtml {
  const held = worker && workerUnhealthy(worker) && UNSETTLED_STATUSES.includes(task.status);
  return html`<span class="where">${whereText(task)}</span>${held ? html`<br><strong class="s-error worker-held">${worker.state} since ${time(worker.since)}</strong>` : ""}`;
}

/** The home page's workers: health, running against capacity, queued. Nothing when there are none. */
export function workersSection(workers: ProjectWorker[], projects: ProjectRef[]): SafeHtml {
  if (workers.length === 0) return html``;
  const manyProjects = new Set(workers.map((w) => w.projectId)).size > 1;
  return html`<section id="workers"><h2>Workers (${workers.length})</h2><table class="workers"><thead><tr><th>worker</th><th>host</th><th>health</th><th>running / capacity</th><th>queued</th>${manyProjects ? html`<th>project</th>` : ""}</tr></thead><tbody>
${workers.map((w) => html`<tr data-worker="${w.name}"><td>${w.name}</td><td class="id">${w.host}</td><td class="worker-health">${healthLine(w)}</td>
<td>${w.running} / ${w.capacity}</td><td>${w.queued}</td>${manyProjects ? html`<td>${projectName(projects, w.projectId)}</td>` : ""}</tr>`)}</tbody></table></section>`;
}

/** "worker box unreachable since 14:02; 3 running tasks held": an unhealthy worker still holding tasks. */
export function workerAttention(workers: ProjectWorker[]): { kind: string; text: SafeHtml; href: string }[] {
  return workers.filter((w) => workerUnhealthy(w) && w.running > 0).map((w) => ({
    kind: "worker",
    text: html`worker ${w.name} ${w.state} since ${time(w.since)}; ${w.running} running task${w.running === 1 ? "" : "s"} held${w.error ? ` (${preview(w.error, 160)})` : ""}`,
    href: "#workers",
  }));
}

/** Where a run's task ran ("local", "worker box"), under its number; nothing for a run without a task. */
export function runWhere(r: { taskWorker?: string | null }): SafeHtml | "" {
  return r.taskWorker === undefined ? "" : html`<div class="small where">${whereText({ worker: r.taskWorker ?? undefined })}</div>`;
}

function key(projectId: string, name: string): string {
  return `${projectId}\n${name}`;
}

import type { ProjectRef, ReadModel } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import { html } from "./html.ts";
import { homePage, readHome } from "./home-page.ts";
import { layout } from "./page-layout.ts";
import { taskPage } from "./task-page.ts";
import { automationPage, readAutomation } from "./automation-page.ts";

/** The most events a task page shows: a page costs the same however long a task ran. */
const TIMELINE_LIMIT = 500;

export type PageResult = { status: number; body: string };

/** GET pages: home, one task, one automation. */
export function routePage(reader: ReadModel, url: URL, now: number): PageResult {
  const project = url.searchParams.get("project") || undefined;
  const frame = { projects: reader.projects(), project, path: url.pathname + url.search };
  if (url.pathname === "/") return ok(homePage(readHome(reader, project, now), frame, now).value);
  if (url.pathname === "/task") {
    const task = project && reader.tasks.get(project, url.searchParams.get("id") ?? "");
    if (!task) return notFound(frame, "No such task in this database (it may have been removed by retention).");
    const worker = task.worker === undefined ? undefined : reader.workers.list(task.projectId).find((w) => w.name === task.worker);
    const data = {
      task, events: reader.tasks.events(task.projectId, task.id, TIMELINE_LIMIT), evidence: reader.tasks.evidence(task), commands: reader.commands(task.projectId, 20), worker,
      launchedBy: reader.tasks.get(task.projectId, task.parentSessionID), run: reader.automations.runOfTask(task.projectId, task.id), below: tasksBelow(reader, task),
    };
    return ok(taskPage(data, frame, now).value);
  }
  if (url.pathname === "/automation") {
    const data = project && readAutomation(reader, project, url.searchParams);
    if (!data) return notFound(frame, "No such automation (it may have been deleted).");
    return ok(automationPage(data, frame, now).value);
  }
  return notFound(frame, "No such page.");
}

function ok(body: string): PageResult {
  return { status: 200, body };
}

function notFound(frame: { projects: ProjectRef[]; project?: string; path: string }, message: string): PageResult {
  return { status: 404, body: layout({ ...frame, title: "Not found" }, html`<h1>Not found</h1><p>${message} <a href="/">Home</a></p>`).value };
}

/** The tasks a task's child launched, and theirs, in tree order (a task page shows the tree). */
function tasksBelow(reader: ReadModel, task: ProjectTask, depth = 1, seen = new Set([task.id])): { task: ProjectTask; depth: number }[] {
  return reader.tasks.list({ projectId: task.projectId, parentSessionID: task.id, includeCleared: true }).flatMap((child) => {
    if (seen.has(child.id)) return [];
    seen.add(child.id);
    return [{ task: child, depth }, ...tasksBelow(reader, child, depth + 1, seen)];
  });
}

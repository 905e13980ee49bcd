import type { ProjectRef, ReadModel } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import { html } from "./html.ts";
import { homePage, readHome } from "./home-page.ts";
import { layout } from "./page-layout.ts";
import { taskPage } from "./task-page.ts";
import { automationPage, readAutomation } from "./automation-page.ts";
import { requestsFromSession, requestsFromStore, REQUESTS_SHOWN, type ChildRequests, type SessionMessages } from "./request-rows.ts";
import { spendKey } from "../store/reads/spend-reads.ts";

/** The most events a task page shows: a page costs the same however long a task ran. */
const TIMELINE_LIMIT = 500;

export type PageResult = { status: number; body: string };

/** What only OpenCode knows, when it serves the dashboard; the command line reads only the database. */
export type PageExtras = {
  /** A task page's child session's messages (with the host's reason when it could not read them). */
  session?: SessionMessages;
  /** Its option dailyBudgetUsd (0: none): needs attention says when today's spend reached it. */
  dailyBudgetUsd?: number;
};

/** GET pages: home, one task, one automation. */
export function routePage(reader: ReadModel, url: URL, now: number, extras: PageExtras = {}): PageResult {
  const { session } = extras;
  const project = url.searchParams.get("project") || undefined;
  const frame = { projects: reader.projects(), project, path: url.pathname + url.search };
  if (url.pathname === "/") return ok(homePage(readHome(reader, project, now, extras.dailyBudgetUsd), frame, now).value);
  if (url.pathname === "/task") {
    const task = project && reader.tasks.get(project, url.searchParams.get("id") ?? "");
    if (!task) return notFound(frame, "No such task in this database (it may have been removed by retention).");
    const worker = task.worker === undefined ? undefined : reader.workers.list(task.projectId).find((w) => w.name === task.worker);
    const below = tasksBelow(reader, task);
    const data = {
      task, events: reader.tasks.events(task.projectId, task.id, TIMELINE_LIMIT), evidence: reader.tasks.evidence(task), commands: reader.commands(task.projectId, 20), worker,
      launchedBy: reader.tasks.get(task.projectId, task.parentSessionID), run: reader.automations.runOfTask(task.projectId, task.id), below,
      ...taskSpend(reader, task, below.map((b) => b.task), session),
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

/** The task's spend (its own, and with what it launched), each task below's, and its child's requests in order. */
function taskSpend(reader: ReadModel, task: ProjectTask, below: ProjectTask[], session: SessionMessages | undefined) {
  const key = (t: ProjectTask) => spendKey(t.projectId, t.id);
  const trees = reader.spend.trees([task, ...below]);
  const own = reader.spend.own([task]).get(key(task));
  const belowSpend = new Map(below.flatMap((t) => (trees.has(key(t)) ? [[t.id, trees.get(key(t))!] as const] : [])));
  return { spend: { own, tree: trees.get(key(task)) }, belowSpend, requests: childRequests(reader, task, own?.requests ?? 0, session) };
}

function childRequests(reader: ReadModel, task: ProjectTask, total: number, session: SessionMessages | undefined): ChildRequests {
  if (session && "messages" in session) return requestsFromSession(session.messages);
  const stored = reader.spend.requests(task.projectId, task.id, REQUESTS_SHOWN);
  const note = session
    ? `OpenCode could not read this session's messages (${session.unavailable}): each request's tokens and cost only, from the database.`
    : "Served by the command line, which reads only the database: each request's tokens and cost, in order. When OpenCode serves this page (option dashboardPort), it shows each request's model, time and tool calls too.";
  return requestsFromStore(stored, total, note);
}

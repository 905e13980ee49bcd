import { existsSync } from "node:fs";
import type { Automation, Run, Trigger } from "../automations/automation.ts";
import { rowToAutomation, rowToRun, rowToTrigger } from "./automation-rows.ts";
import { SETTLED_STATUSES, UNSETTLED_STATUSES, type Task, type TaskStatus } from "../core/task.ts";
import type { PendingNotification, TaskEvent } from "../core/task-store.ts";
import { readRun } from "./run-evidence.ts";
import type { RunEvidence } from "../evidence/evidence-types.ts";
import type { InboxCommand } from "../inbox/inbox-command.ts";
import { rowToCommand } from "./command-repository.ts";
import { rowToEvent, rowToNotification } from "./log-rows.ts";
import { openSqlite, type SqliteDatabase, type SqliteStatement, type SqlRow, type SqlValue } from "./sqlite-driver.ts";
import { SqliteEvidenceStore } from "./sqlite-evidence-store.ts";
import { StatementCache } from "./statement-cache.ts";
import { StoreUnavailableError } from "./store-unavailable-error.ts";
import { rowToTask } from "./task-row.ts";

const SESSION_PREFIX = "ses_";

export type ProjectTask = Task & { projectId: string };
export type ProjectEvent = TaskEvent & { projectId: string };
export type ProjectNotification = PendingNotification & { projectId: string; deliveredAt?: number };
export type ProjectAutomation = Automation & { projectId: string; triggers: Trigger[]; lastRun?: Run };
export type ProjectRun = RunWithTask & { projectId: string; title?: string };
/** A run with where its task's child ran: a worker's name, null on the local OpenCode; absent when it has no task (or it is gone). */
export type RunWithTask = Run & { taskWorker?: string | null };
/** A worker (another OpenCode server) as its project's OpenCode last saw it (migration 15), with the tasks it holds. */
export type ProjectWorker = {
  projectId: string; name: string; host: string; capacity: number;
  /** unknown | healthy | unreachable | unauthorized | misconfigured */
  state: string; since: number; error?: string; checkedAt: number;
  /** Its tasks running (or resumed) now, and those queued for it. */
  running: number; queued: number;
};
export type ProjectRef = { id: string; directory?: string };
export type ChannelFailure = {
  projectId: string; automationId: string; title?: string; runNo?: number; channel: string; host: string; attempts: number; lastError?: string; endedAt: number;
};
export type ProjectWebhook = { name: string; projectId: string; triggerId: string; automationId: string; title?: string; url?: string; secret: string; waiting: number };
export type RunFilter = { status?: string; trigger?: string; from?: number; to?: number; limit?: number };

export type TaskQuery = {
  projectId?: string;
  parentSessionID?: string;
  statuses?: TaskStatus[];
  includeCleared?: boolean;
};

const newestSettled = (a: ProjectTask, b: ProjectTask) => (b.settledAt ?? 0) - (a.settledAt ?? 0);

/**
 * The one read model of the database, across every project: the command line and the dashboard
 * read through it (the plugin itself writes through SqliteTaskStore, scoped to one project). Its
 * own read-only connection never blocks the plugin's writers (WAL). The dashboard's queries are
 * bounded, so a page costs the same with 10 or 10,000 tasks stored. Tables from later migrations
 * may be missing in an older database, or appear while it runs: the plugin migrates the file.
 */
export class TaskReader {
  private statements = new StatementCache();
  private tables = new Set<string>();
  private tablesVersion = -1;

  /** Opens read-only; never creates the file. Throws StoreUnavailableError. */
  static open(path: string): TaskReader {
    if (!existsSync(path)) throw new StoreUnavailableError(path, "missing", "the file does not exist");
    return new TaskReader(openSqlite(path, { readonly: true, verify: assertTaskDatabase }));
  }

  private constructor(private readonly db: SqliteDatabase) {}

  get path(): string {
    return this.db.path;
  }

  /** Changes whenever another connection commits: one pragma, no table read. */
  dataVersion(): number {
    return Number(this.sql("PRAGMA data_version").get()?.data_version);
  }

  schemaVersions(): number[] {
    return this.sql("SELECT version FROM schema_migrations ORDER BY version").all().map((row) => Number(row.version));
  }

  /** Every project with tasks or automations, with its directory where the plugin recorded it (migration 9). */
  projects(): ProjectRef[] {
    const parts = ["SELECT DISTINCT project_id FROM tasks"];
    if (this.has("automations")) parts.push("SELECT DISTINCT project_id FROM automations");
    const ids = `SELECT project_id FROM (${parts.join(" UNION ")})`;
    const text = this.has("projects")
      ? `SELECT i.project_id, p.directory FROM (${ids}) i LEFT JOIN projects p ON p.project_id = i.project_id ORDER BY 1`
      : `${ids} ORDER BY 1`;
    return this.sql(text).all().map((row) => ({ id: String(row.project_id), ...(typeof row.directory === "string" ? { directory: row.directory } : {}) }));
  }

  /** Every task matching the query, oldest first (unbounded: the command line's list and export). */
  tasks(query: TaskQuery = {}): ProjectTask[] {
    const where: string[] = [];
    const params: SqlValue[] = [];
    const add = (clause: string, value?: SqlValue) => {
      where.push(clause);
      if (value !== undefined) params.push(value);
    };
    if (query.projectId) add("project_id = ?", query.projectId);
    if (query.parentSessionID) add("parent_session_id = ?", query.parentSessionID);
    if (query.statuses) add("status IN (SELECT value FROM json_each(?))", JSON.stringify(query.statuses));
    if (!query.includeCleared) add("cleared_at IS NULL");
    const text = `SELECT * FROM tasks ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at, rowid`;
    return this.sql(text).all(...params).map(toProjectTask);
  }

  task(projectId: string, id: string): ProjectTask | undefined {
    const row = this.sql("SELECT * FROM tasks WHERE project_id = ? AND id = ?").get(projectId, id);
    return row && toProjectTask(row);
  }

  /**
   * Tasks whose id starts with `prefix`, or with `ses_` + `prefix` (the tools accept ids without
   * it too); only the exact one when an id equals it.
   */
  findByIdPrefix(prefix: string): ProjectTask[] {
    const query = this.sql("SELECT * FROM tasks WHERE substr(id, 1, ?) = ? ORDER BY created_at, rowid");
    let rows = query.all(prefix.length, prefix);
    if (rows.length === 0 && !prefix.startsWith(SESSION_PREFIX)) rows = query.all(prefix.length + SESSION_PREFIX.length, SESSION_PREFIX + prefix);
    const exact = rows.filter((row) => row.id === prefix || row.id === SESSION_PREFIX + prefix);
    return (exact.length ? exact : rows).map(toProjectTask);
  }

  /** Queued and running tasks, oldest first. */
  activeTasks(projectId?: string, limit = 200): ProjectTask[] {
    return this.byStatus(UNSETTLED_STATUSES, "", "+created_at", projectId, limit).sort((a, b) => a.createdAt - b.createdAt).slice(0, limit);
  }

  recentTasks(projectId?: string, limit = 30): ProjectTask[] {
    return this.byStatus(SETTLED_STATUSES, "", "settled_at DESC", projectId, limit).sort(newestSettled).slice(0, limit);
  }

  failedSince(since: number, projectId?: string, limit = 20): ProjectTask[] {
    return this.byStatus(["error"], `AND settled_at >= ${Math.floor(since)}`, "settled_at DESC", projectId, limit).sort(newestSettled).slice(0, limit);
  }

  /** One task's event log, oldest first; all of it unless `limit` is given. */
  events(projectId: string, taskId: string, limit?: number): TaskEvent[] {
    return this.sql("SELECT * FROM task_events WHERE project_id = ? AND task_id = ? ORDER BY id LIMIT ?")
      .all(projectId, taskId, limit ?? -1) // -1: SQLite's "no limit"
      .map(rowToEvent);
  }

  allEvents(): ProjectEvent[] {
    return this.sql("SELECT * FROM task_events ORDER BY id").all().map((row) => ({ projectId: String(row.project_id), ...rowToEvent(row) }));
  }

  /** The permission each task is waiting for (its latest permission event is an ask), by task id. */
  permissionWaits(tasks: ProjectTask[]): Map<string, { title: string; at: number }> {
    const query = this.sql(`SELECT kind, detail, at FROM task_events WHERE project_id = ? AND task_id = ?
      AND kind IN ('permission-asked', 'permission-replied') ORDER BY id DESC LIMIT 1`);
    const waits = new Map<string, { title: string; at: number }>();
    for (const t of tasks) {
      const row = query.get(t.projectId, t.id);
      if (row?.kind === "permission-asked") waits.set(t.id, { title: String(row.detail ?? "a permission"), at: Number(row.at) });
    }
    return waits;
  }

  notifications(): ProjectNotification[] {
    return this.sql("SELECT * FROM notifications ORDER BY project_id, created_at, rowid").all().map(toProjectNotification);
  }

  /** Every run's evidence, oldest first; empty before evidence existed (migration 6). */
  evidence(task: ProjectTask): RunEvidence[] {
    if (!this.has("task_evidence")) return [];
    const store = new SqliteEvidenceStore(this.db, task.projectId);
    return Array.from({ length: task.resumeCount + 1 }, (_, run) => readRun(store, task.id, run));
  }

  /** Tasks settled since `since` whose result the evidence contradicts. */
  /** Channel deliveries given up since `since`: the dashboard's needs-attention list (name and host only, never a URL). */
  channelFailures(since: number, projectId?: string): ChannelFailure[] {
    if (!this.has("channel_deliveries")) return [];
    return this.sql(`SELECT d.project_id, d.automation_id, d.channel, d.host, d.attempts, d.last_error, d.ended_at, r.run_no, a.title
      FROM channel_deliveries d LEFT JOIN automation_runs r ON r.project_id = d.project_id AND r.id = d.run_id
      LEFT JOIN automations a ON a.project_id = d.project_id AND a.id = d.automation_id
      WHERE d.status = 'failed' AND d.ended_at >= ? ${projectId ? "AND d.project_id = ?" : ""} ORDER BY d.ended_at DESC LIMIT 50`)
      .all(...(projectId ? [since, projectId] : [since])).map((row) => ({
        projectId: String(row.project_id), automationId: String(row.automation_id), title: row.title == null ? undefined : String(row.title),
        runNo: row.run_no == null ? undefined : Number(row.run_no), channel: String(row.channel), host: String(row.host),
        attempts: Number(row.attempts), lastError: row.last_error == null ? undefined : String(row.last_error), endedAt: Number(row.ended_at),
      }));
  }

  evidenceFlags(since: number, projectId?: string, limit = 20): { task: ProjectTask; message: string }[] {
    if (!this.has("task_evidence")) return [];
    const params: SqlValue[] = [Math.floor(since)];
    if (projectId) params.push(projectId);
    return this.sql(`SELECT t.*, e.data AS flag FROM task_evidence e JOIN tasks t ON t.project_id = e.project_id AND t.id = e.task_id
      WHERE e.kind = 'contradiction' AND e.data <> '[]' AND t.settled_at >= ? ${projectId ? "AND t.project_id = ?" : ""}
      ORDER BY t.settled_at DESC LIMIT ${limit}`).all(...params)
      .map((row) => ({ task: toProjectTask(row), message: flagMessage(row.flag) }));
  }

  /** Every project's workers by project and name, with the tasks each runs and has queued; none before migration 15. */
  workers(projectId?: string): ProjectWorker[] {
    if (!this.has("worker_health")) return [];
    const count = (statuses: string) => `(SELECT count(*) FROM tasks t WHERE t.project_id = h.project_id AND t.status IN (${statuses}) AND t.worker = h.name)`;
    return this.sql(`SELECT h.*, ${count("'running', 'resumed'")} AS running, ${count("'queued'")} AS queued FROM worker_health h
      ${projectId ? "WHERE h.project_id = ?" : ""} ORDER BY h.project_id, h.name`).all(...(projectId ? [projectId] : [])).map((row) => ({
      projectId: String(row.project_id), name: String(row.name), host: String(row.host), capacity: Number(row.capacity), state: String(row.state),
      since: Number(row.since), ...(row.error == null ? {} : { error: String(row.error) }), checkedAt: Number(row.checked_at),
      running: Number(row.running), queued: Number(row.queued),
    }));
  }

  /** Every project's webhooks: name, project, trigger, automation, URL and secret (the CLI hides it unless asked). */
  webhooks(projectId?: string): ProjectWebhook[] {
    if (!this.has("webhooks")) return [];
    return this.sql(`SELECT w.name, w.project_id, w.trigger_id, w.secret, t.automation_id, t.spec, a.title,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.trigger_id = w.trigger_id AND d.status IN ('pending', 'claimed')) AS waiting
      FROM webhooks w JOIN automation_triggers t ON t.project_id = w.project_id AND t.id = w.trigger_id
      LEFT JOIN automations a ON a.project_id = t.project_id AND a.id = t.automation_id
      ${projectId ? "WHERE w.project_id = ?" : ""} ORDER BY w.created_at`).all(...(projectId ? [projectId] : [])).map((row) => ({
      name: String(row.name), projectId: String(row.project_id), triggerId: String(row.trigger_id), automationId: String(row.automation_id),
      title: row.title == null ? undefined : String(row.title), url: (JSON.parse(String(row.spec)) as { url?: string }).url,
      secret: String(row.secret), waiting: Number(row.waiting),
    }));
  }

  automations(projectId?: string, limit = 500): ProjectAutomation[] {
    if (!this.has("automations")) return [];
    const rows = this.sql(`SELECT * FROM automations ${projectId ? "WHERE project_id = ?" : ""} ORDER BY created_at, rowid LIMIT ${limit}`)
      .all(...(projectId ? [projectId] : []));
    return rows.map((row) => this.withTriggers(row));
  }

  automation(projectId: string, id: string): ProjectAutomation | undefined {
    if (!this.has("automations")) return undefined;
    const row = this.sql("SELECT * FROM automations WHERE project_id = ? AND id = ?").get(projectId, id);
    return row && this.withTriggers(row);
  }

  /** Newest first, filtered by status, trigger id (or "manual"), and creation time. */
  runs(projectId: string, automationId: string, filter: RunFilter = {}): RunWithTask[] {
    if (!this.has("automation_runs")) return [];
    const where = ["project_id = ?", "automation_id = ?"];
    const params: SqlValue[] = [projectId, automationId];
    if (filter.status) (where.push("status = ?"), params.push(filter.status));
    if (filter.trigger === "manual") where.push("trigger_id IS NULL");
    else if (filter.trigger) (where.push("trigger_id = ?"), params.push(filter.trigger));
    if (filter.from !== undefined) (where.push("created_at >= ?"), params.push(filter.from));
    if (filter.to !== undefined) (where.push("created_at < ?"), params.push(filter.to));
    params.push(filter.limit ?? 100);
    return this.sql(`SELECT r.*, ${this.taskWorker()} FROM automation_runs r WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`).all(...params).map(toRunWithTask);
  }

  /** Recent runs of every automation, newest first, with the automation's title. */
  recentRuns(projectId?: string, limit = 20): ProjectRun[] {
    if (!this.has("automation_runs")) return [];
    return this.sql(`SELECT r.*, a.title AS title, ${this.taskWorker()} FROM automation_runs r LEFT JOIN automations a
      ON a.project_id = r.project_id AND a.id = r.automation_id ${projectId ? "WHERE r.project_id = ?" : ""}
      ORDER BY r.id DESC LIMIT ${limit}`).all(...(projectId ? [projectId] : []))
      .map((row) => ({ ...toRunWithTask(row), projectId: String(row.project_id), title: row.title === null ? undefined : String(row.title) }));
  }

  /** Commands from the dashboard, newest first. */
  commands(projectId?: string, limit = 20): InboxCommand[] {
    if (!this.has("dashboard_commands")) return [];
    return this.sql(`SELECT * FROM dashboard_commands ${projectId ? "WHERE project_id = ?" : ""} ORDER BY id DESC LIMIT ${limit}`)
      .all(...(projectId ? [projectId] : [])).map(rowToCommand);
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }

  private withTriggers(row: SqlRow): ProjectAutomation {
    const a = rowToAutomation(row);
    const projectId = String(row.project_id);
    const triggers = this.sql("SELECT * FROM automation_triggers WHERE project_id = ? AND automation_id = ? ORDER BY created_at, rowid")
      .all(projectId, a.id).map(rowToTrigger);
    const last = this.sql("SELECT * FROM automation_runs WHERE project_id = ? AND automation_id = ? ORDER BY id DESC LIMIT 1").get(projectId, a.id);
    return { ...a, projectId, triggers, ...(last ? { lastRun: rowToRun(last) } : {}) };
  }

  /** The column task_worker of a run `r`: its task's worker, '' when local, NULL when there is no such task (local only before migration 15). */
  private taskWorker(): string {
    const worker = this.has("worker_health") ? "coalesce(t.worker, '')" : "''";
    return `(SELECT ${worker} FROM tasks t WHERE t.project_id = r.project_id AND t.id = r.task_id) AS task_worker`;
  }

  /**
   * Tasks in the given statuses, per project and status, so that each query is a seek on the
   * (project_id, status, settled_at) index with its own LIMIT: a scan of every row (prompts and
   * results included) took 60 ms at 10,000 tasks. (`+created_at` keeps the planner from walking
   * the created_at index through every task to avoid a sort of a few rows.)
   */
  private byStatus(statuses: readonly string[], extra: string, order: string, projectId: string | undefined, limit: number): ProjectTask[] {
    const query = this.sql(`SELECT * FROM tasks WHERE project_id = ? AND status = ? ${extra} AND cleared_at IS NULL ORDER BY ${order} LIMIT ?`);
    const projects = projectId ? [projectId] : this.taskProjects();
    return projects.flatMap((p) => statuses.flatMap((status) => query.all(p, status, limit).map(toProjectTask)));
  }

  private taskProjects(): string[] {
    return this.sql("SELECT DISTINCT project_id FROM tasks").all().map((row) => String(row.project_id));
  }

  /** Whether a table exists; the plugin may migrate the file while the reader is open. */
  private has(table: string): boolean {
    const version = this.dataVersion();
    if (version !== this.tablesVersion) {
      this.tablesVersion = version;
      this.tables = new Set(this.sql("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name)));
    }
    return this.tables.has(table);
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

function toProjectTask(row: SqlRow): ProjectTask {
  return { projectId: String(row.project_id), ...rowToTask(row) };
}

function toRunWithTask(row: SqlRow): RunWithTask {
  const run: RunWithTask = rowToRun(row);
  if (typeof row.task_worker === "string") run.taskWorker = row.task_worker || null;
  return run;
}

/** A worker the plugin cannot use now (not merely not checked yet). */
export function workerUnhealthy(worker: Pick<ProjectWorker, "state">): boolean {
  return worker.state !== "healthy" && worker.state !== "unknown";
}

function toProjectNotification(row: SqlRow): ProjectNotification {
  const notification: ProjectNotification = { projectId: String(row.project_id), ...rowToNotification(row) };
  if (row.delivered_at !== null) notification.deliveredAt = row.delivered_at as number;
  return notification;
}

function flagMessage(data: unknown): string {
  try {
    const list = JSON.parse(String(data)) as { message?: string }[];
    return list.map((c) => c.message ?? "flagged").join("; ") || "flagged";
  } catch {
    return "flagged";
  }
}

/**
 * Refuses a file without the plugin's ledger. One with no tables yet, or the ledger alone, is
 * one the plugin is creating right now (it makes the file, then migrates): "missing" for now.
 */
function assertTaskDatabase(db: SqliteDatabase): void {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name)));
  if (tables.has("schema_migrations") && tables.has("tasks")) return;
  if (tables.size === 0 || tables.has("schema_migrations")) throw new StoreUnavailableError(db.path, "missing", "the plugin has not finished creating it");
  throw new StoreUnavailableError(db.path, "foreign", "it holds no background tasks tables");
}

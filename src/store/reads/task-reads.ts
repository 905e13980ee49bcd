import { SETTLED_STATUSES, UNSETTLED_STATUSES, type Task, type TaskStatus } from "../../core/task.ts";
import type { PendingNotification, TaskEvent } from "../../core/task-store.ts";
import type { RunEvidence } from "../../evidence/evidence-types.ts";
import { rowToEvent, rowToNotification } from "../log-rows.ts";
import { readRun } from "../run-evidence.ts";
import type { SqlRow, SqlValue } from "../sqlite-driver.ts";
import { SqliteEvidenceStore } from "../sqlite-evidence-store.ts";
import { rowToTask } from "../task-row.ts";
import type { ReadConnection } from "./read-connection.ts";

const SESSION_PREFIX = "ses_";

export type ProjectTask = Task & { projectId: string };
export type ProjectEvent = TaskEvent & { projectId: string };
export type ProjectNotification = PendingNotification & { projectId: string; deliveredAt?: number };

export type TaskQuery = {
  projectId?: string;
  parentSessionID?: string;
  statuses?: TaskStatus[];
  includeCleared?: boolean;
};

const newestSettled = (a: ProjectTask, b: ProjectTask) => (b.settledAt ?? 0) - (a.settledAt ?? 0);

/** Tasks across every project: their rows, event logs, evidence and parent notifications. */
export class TaskReads {
  constructor(private readonly connection: ReadConnection) {}

  /** Every task matching the query, oldest first (unbounded: the command line's list and export). */
  list(query: TaskQuery = {}): ProjectTask[] {
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
    return this.connection.sql(text).all(...params).map(toProjectTask);
  }

  get(projectId: string, id: string): ProjectTask | undefined {
    const row = this.connection.sql("SELECT * FROM tasks WHERE project_id = ? AND id = ?").get(projectId, id);
    return row && toProjectTask(row);
  }

  /**
   * Tasks whose id starts with `prefix`, or with `ses_` + `prefix` (the tools accept ids without
   * it too); only the exact one when an id equals it.
   */
  findByIdPrefix(prefix: string): ProjectTask[] {
    const query = this.connection.sql("SELECT * FROM tasks WHERE substr(id, 1, ?) = ? ORDER BY created_at, rowid");
    let rows = query.all(prefix.length, prefix);
    if (rows.length === 0 && !prefix.startsWith(SESSION_PREFIX)) rows = query.all(prefix.length + SESSION_PREFIX.length, SESSION_PREFIX + prefix);
    const exact = rows.filter((row) => row.id === prefix || row.id === SESSION_PREFIX + prefix);
    return (exact.length ? exact : rows).map(toProjectTask);
  }

  /** Queued and running tasks, oldest first. */
  active(projectId?: string, limit = 200): ProjectTask[] {
    return this.byStatus(UNSETTLED_STATUSES, "", "+created_at", projectId, limit).sort((a, b) => a.createdAt - b.createdAt).slice(0, limit);
  }

  /** Settled tasks, newest first. */
  recent(projectId?: string, limit = 30): ProjectTask[] {
    return this.byStatus(SETTLED_STATUSES, "", "settled_at DESC", projectId, limit).sort(newestSettled).slice(0, limit);
  }

  failedSince(since: number, projectId?: string, limit = 20): ProjectTask[] {
    return this.byStatus(["error"], `AND settled_at >= ${Math.floor(since)}`, "settled_at DESC", projectId, limit).sort(newestSettled).slice(0, limit);
  }

  /** One task's event log, oldest first; all of it unless `limit` is given. */
  events(projectId: string, taskId: string, limit?: number): TaskEvent[] {
    return this.connection.sql("SELECT * FROM task_events WHERE project_id = ? AND task_id = ? ORDER BY id LIMIT ?")
      .all(projectId, taskId, limit ?? -1) // -1: SQLite's "no limit"
      .map(rowToEvent);
  }

  allEvents(): ProjectEvent[] {
    return this.connection.sql("SELECT * FROM task_events ORDER BY id").all().map((row) => ({ projectId: String(row.project_id), ...rowToEvent(row) }));
  }

  /** The permission each task is waiting for (its latest permission event is an ask), by task id. */
  permissionWaits(tasks: ProjectTask[]): Map<string, { title: string; at: number }> {
    const query = this.connection.sql(`SELECT kind, detail, at FROM task_events WHERE project_id = ? AND task_id = ?
      AND kind IN ('permission-asked', 'permission-replied') ORDER BY id DESC LIMIT 1`);
    const waits = new Map<string, { title: string; at: number }>();
    for (const t of tasks) {
      const row = query.get(t.projectId, t.id);
      if (row?.kind === "permission-asked") waits.set(t.id, { title: String(row.detail ?? "a permission"), at: Number(row.at) });
    }
    return waits;
  }

  notifications(): ProjectNotification[] {
    return this.connection.sql("SELECT * FROM notifications ORDER BY project_id, created_at, rowid").all().map(toProjectNotification);
  }

  /** Every run's evidence, oldest first; empty before evidence existed (migration 6). */
  evidence(task: ProjectTask): RunEvidence[] {
    if (!this.connection.has("task_evidence")) return [];
    const store = new SqliteEvidenceStore(this.connection.db, task.projectId);
    return Array.from({ length: task.resumeCount + 1 }, (_, run) => readRun(store, task.id, run));
  }

  /** Tasks settled since `since` whose result the evidence contradicts. */
  evidenceFlags(since: number, projectId?: string, limit = 20): { task: ProjectTask; message: string }[] {
    if (!this.connection.has("task_evidence")) return [];
    const params: SqlValue[] = [Math.floor(since)];
    if (projectId) params.push(projectId);
    return this.connection.sql(`SELECT t.*, e.data AS flag FROM task_evidence e JOIN tasks t ON t.project_id = e.project_id AND t.id = e.task_id
      WHERE e.kind = 'contradiction' AND e.data <> '[]' AND t.settled_at >= ? ${projectId ? "AND t.project_id = ?" : ""}
      ORDER BY t.settled_at DESC LIMIT ${limit}`).all(...params)
      .map((row) => ({ task: toProjectTask(row), message: flagMessage(row.flag) }));
  }

  /**
   * Tasks in the given statuses, per project and status, so that each query is a seek on the
   * (project_id, status, settled_at) index with its own LIMIT: a scan of every row (prompts and
   * results included) took 60 ms at 10,000 tasks. (`+created_at` keeps the planner from walking
   * the created_at index through every task to avoid a sort of a few rows.)
   */
  private byStatus(statuses: readonly string[], extra: string, order: string, projectId: string | undefined, limit: number): ProjectTask[] {
    const query = this.connection.sql(`SELECT * FROM tasks WHERE project_id = ? AND status = ? ${extra} AND cleared_at IS NULL ORDER BY ${order} LIMIT ?`);
    const projects = projectId ? [projectId] : this.taskProjects();
    return projects.flatMap((p) => statuses.flatMap((status) => query.all(p, status, limit).map(toProjectTask)));
  }

  private taskProjects(): string[] {
    return this.connection.sql("SELECT DISTINCT project_id FROM tasks").all().map((row) => String(row.project_id));
  }
}

function toProjectTask(row: SqlRow): ProjectTask {
  return { projectId: String(row.project_id), ...rowToTask(row) };
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

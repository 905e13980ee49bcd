import { existsSync } from "node:fs";
import type { Task, TaskStatus } from "../core/task.ts";
import type { PendingNotification, TaskEvent } from "../core/task-store.ts";
import { rowToEvent, rowToNotification } from "./log-rows.ts";
import { openSqlite, type SqliteDatabase, type SqlRow, type SqlValue } from "./sqlite-driver.ts";
import { StoreUnavailableError } from "./store-unavailable-error.ts";
import { rowToTask } from "./task-row.ts";
import type { EvidenceStore } from "../evidence/evidence-types.ts";
import { SqliteEvidenceStore } from "./sqlite-evidence-store.ts";

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

/**
 * Read-only view across every project, for the command line. The plugin itself goes through
 * SqliteTaskStore, which is scoped to one project.
 */
export class TaskReader {
  /** Opens read-only; never creates the file. Throws StoreUnavailableError. */
  static open(path: string): TaskReader {
    if (!existsSync(path)) throw new StoreUnavailableError(path, "missing", "the file does not exist");
    return new TaskReader(openSqlite(path, { readonly: true, verify: assertTaskDatabase }));
  }

  private constructor(private readonly db: SqliteDatabase) {}

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
    const sql = `SELECT * FROM tasks ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at, rowid`;
    return this.db.prepare(sql).all(...params).map(rowToProjectTask);
  }

  /**
   * Tasks whose id starts with `prefix`, or with `ses_` + `prefix` (the tools accept ids without
   * it too); only the exact one when an id equals it.
   */
  findByIdPrefix(prefix: string): ProjectTask[] {
    const query = this.db.prepare("SELECT * FROM tasks WHERE substr(id, 1, ?) = ? ORDER BY created_at, rowid");
    let rows = query.all(prefix.length, prefix);
    if (rows.length === 0 && !prefix.startsWith(SESSION_PREFIX)) rows = query.all(prefix.length + SESSION_PREFIX.length, SESSION_PREFIX + prefix);
    const exact = rows.filter((row) => row.id === prefix || row.id === SESSION_PREFIX + prefix);
    return (exact.length ? exact : rows).map(rowToProjectTask);
  }

  events(projectId: string, taskId: string): TaskEvent[] {
    return this.db
      .prepare("SELECT * FROM task_events WHERE project_id = ? AND task_id = ? ORDER BY id")
      .all(projectId, taskId)
      .map(rowToEvent);
  }

  allEvents(): ProjectEvent[] {
    return this.db
      .prepare("SELECT * FROM task_events ORDER BY id")
      .all()
      .map((row) => ({ projectId: row.project_id as string, ...rowToEvent(row) }));
  }

  notifications(): ProjectNotification[] {
    return this.db
      .prepare("SELECT * FROM notifications ORDER BY project_id, created_at, rowid")
      .all()
      .map(rowToProjectNotification);
  }

  /** The evidence of one project's tasks; undefined for a database from before evidence (migration 6). */
  evidence(projectId: string): EvidenceStore | undefined {
    const table = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_evidence'").get();
    return table ? new SqliteEvidenceStore(this.db, projectId) : undefined;
  }

  schemaVersions(): number[] {
    return this.db
      .prepare("SELECT version FROM schema_migrations ORDER BY version")
      .all()
      .map((row) => Number(row.version));
  }

  close(): void {
    this.db.close();
  }
}

function rowToProjectTask(row: SqlRow): ProjectTask {
  return { projectId: row.project_id as string, ...rowToTask(row) };
}

function rowToProjectNotification(row: SqlRow): ProjectNotification {
  const notification: ProjectNotification = { projectId: row.project_id as string, ...rowToNotification(row) };
  if (row.delivered_at !== null) notification.deliveredAt = row.delivered_at as number;
  return notification;
}

function assertTaskDatabase(db: SqliteDatabase): void {
  const ledger = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!ledger) throw new StoreUnavailableError(db.path, "foreign", "it holds no background tasks tables");
}

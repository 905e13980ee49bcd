import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SETTLED_STATUSES, type Task } from "../core/task.ts";
import type { PendingNotification, TaskEvent, TaskFilter, TaskStore } from "../core/task-store.ts";
import { rowToEvent, rowToNotification } from "./log-rows.ts";
import { assertOwnDatabase, migrate } from "./migrations.ts";
import { openSqlite, type SqliteDatabase, type SqliteStatement } from "./sqlite-driver.ts";
import { toStoreUnavailable } from "./store-unavailable-error.ts";
import { TaskCache } from "./task-cache.ts";
import { rowToTask, TASK_COLUMNS, taskToParams } from "./task-row.ts";

const UPSERT_TASK = `INSERT INTO tasks (${TASK_COLUMNS.join(", ")})
  VALUES (${TASK_COLUMNS.map(() => "?").join(", ")})
  ON CONFLICT (project_id, id) DO UPDATE SET
  ${TASK_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(", ")}`;

// A delivered notification stays delivered: enqueueing its id again must not resurrect it.
const UPSERT_NOTIFICATION = `INSERT INTO notifications
  (project_id, id, parent_session_id, task_id, text, wake, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (project_id, id) DO UPDATE SET parent_session_id = excluded.parent_session_id,
  task_id = excluded.task_id, text = excluded.text, wake = excluded.wake, created_at = excluded.created_at
  WHERE delivered_at IS NULL`;

// rowid breaks createdAt ties by first save, as the in-memory store does.
const SELECT_PROJECT_TASKS = "SELECT * FROM tasks WHERE project_id = ? ORDER BY created_at, rowid";

const PURGEABLE = `SELECT id FROM tasks WHERE project_id = ? AND settled_at < ?
  AND status IN (SELECT value FROM json_each(?))`;

/**
 * The durable TaskStore: one SQLite database shared by all projects, this instance scoped to one.
 * It owns its connection: `close` closes it.
 */
export class SqliteTaskStore implements TaskStore {
  private readonly statements = new Map<string, SqliteStatement>();
  private cache: TaskCache | undefined;
  private cacheVersion = 0;

  /** Creates the folder, opens (never deleting or overwriting a file) and migrates. */
  static open({ path, projectId }: { path: string; projectId: string }): SqliteTaskStore {
    ensureFolder(path);
    const db = openSqlite(path, { verify: assertOwnDatabase });
    try {
      migrate(db);
    } catch (error) {
      db.close();
      throw toStoreUnavailable(path, error);
    }
    return new SqliteTaskStore(db, projectId);
  }

  constructor(
    /** Shared with the stores of other concerns (evidence, automations), so their writes join this one's transactions. */
    readonly db: SqliteDatabase,
    readonly projectId: string,
  ) {}

  get path(): string {
    return this.db.path;
  }

  save(task: Task): void {
    this.sql(UPSERT_TASK).run(...taskToParams(this.projectId, task));
    this.cache?.put(task);
  }

  get(id: string): Task | undefined {
    const row = this.sql("SELECT * FROM tasks WHERE project_id = ? AND id = ?").get(this.projectId, id);
    return row && rowToTask(row);
  }

  list(filter: TaskFilter = {}): Task[] {
    return this.freshCache().list(filter);
  }

  remove(id: string): void {
    this.sql("DELETE FROM tasks WHERE project_id = ? AND id = ?").run(this.projectId, id);
    this.cache?.delete(id);
  }

  appendEvent(event: TaskEvent): void {
    this.sql("INSERT INTO task_events (project_id, task_id, at, kind, detail) VALUES (?, ?, ?, ?, ?)").run(
      this.projectId,
      event.taskId,
      event.at,
      event.kind,
      event.detail ?? null,
    );
  }

  events(taskId: string): TaskEvent[] {
    return this.sql("SELECT * FROM task_events WHERE project_id = ? AND task_id = ? ORDER BY id")
      .all(this.projectId, taskId)
      .map(rowToEvent);
  }

  enqueueNotification(n: PendingNotification): void {
    const params = [n.id, n.parentSessionID, n.taskId, n.text, n.wake ? 1 : 0, n.createdAt];
    this.sql(UPSERT_NOTIFICATION).run(this.projectId, ...params);
  }

  pendingNotifications(parentSessionID?: string): PendingNotification[] {
    const byParent = parentSessionID ? "AND parent_session_id = ?" : "";
    const sql = `SELECT * FROM notifications WHERE project_id = ? ${byParent} AND delivered_at IS NULL
      ORDER BY created_at, rowid`;
    const params = parentSessionID ? [this.projectId, parentSessionID] : [this.projectId];
    return this.sql(sql).all(...params).map(rowToNotification);
  }

  markDelivered(notificationId: string, at: number): void {
    this.sql("UPDATE notifications SET delivered_at = ? WHERE project_id = ? AND id = ? AND delivered_at IS NULL").run(
      at,
      this.projectId,
      notificationId,
    );
  }

  claimNotification(notificationId: string, by: string, at: number): void {
    this.sql(`UPDATE notifications SET claimed_at = ?, claimed_by = ?, claims = claims + 1
      WHERE project_id = ? AND id = ? AND delivered_at IS NULL`).run(at, by, this.projectId, notificationId);
  }

  releaseClaim(notificationId: string): void {
    this.sql("UPDATE notifications SET claimed_at = NULL, claimed_by = NULL WHERE project_id = ? AND id = ?").run(
      this.projectId,
      notificationId,
    );
  }

  /**
   * Retention: removes settled tasks whose settledAt is before cutoffMs, with their events and
   * their delivered notifications (undelivered ones stay until delivered). Returns how many tasks.
   */
  purgeOlderThan(cutoffMs: number): number {
    const params = [this.projectId, cutoffMs, JSON.stringify(SETTLED_STATUSES)];
    this.cache = undefined;
    return this.transaction(() => {
      this.sql(`DELETE FROM task_events WHERE project_id = ? AND task_id IN (${PURGEABLE})`).run(
        this.projectId,
        ...params,
      );
      this.sql(
        `DELETE FROM notifications WHERE project_id = ? AND delivered_at IS NOT NULL AND task_id IN (${PURGEABLE})`,
      ).run(this.projectId, ...params);
      return this.sql(`DELETE FROM tasks WHERE project_id = ? AND id IN (${PURGEABLE})`).run(this.projectId, ...params)
        .changes;
    });
  }

  /** Runs fn in one write transaction, e.g. a settle and its event committed together. */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn);
    } catch (error) {
      this.cache = undefined; // it may hold writes that were just rolled back
      throw error;
    }
  }

  close(): void {
    this.cache = undefined;
    this.statements.clear();
    this.db.close();
  }

  /**
   * The cache, reloaded when another connection (another plugin instance or process) has
   * committed since it was loaded: SQLite's data_version tells, for the cost of one pragma.
   * This connection's own writes keep it current as they happen.
   */
  private freshCache(): TaskCache {
    const version = Number(this.sql("PRAGMA data_version").get()?.data_version);
    if (!this.cache || version !== this.cacheVersion) {
      this.cacheVersion = version;
      this.cache = new TaskCache(this.sql(SELECT_PROJECT_TASKS).all(this.projectId).map(rowToTask));
    }
    return this.cache;
  }

  /** Prepared statements are cached by their SQL text and reused. */
  private sql(text: string): SqliteStatement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }
}

function ensureFolder(path: string): void {
  if (path === ":memory:") return;
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw toStoreUnavailable(path, error);
  }
}

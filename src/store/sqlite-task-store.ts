import { SETTLED_STATUSES, type Task } from "../core/task.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import type { PendingNotification, TaskEvent, TaskFilter, TaskStore } from "../core/task-store.ts";
import { rowToEvent, rowToNotification } from "./log-rows.ts";
import { openDatabase } from "./open-database.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { TaskCache } from "./task-cache.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import { rowToSummary, rowToTask, SUMMARY_COLUMNS, TASK_COLUMNS, taskToParams } from "./task-row.ts";
import { StatementCache } from "./statement-cache.ts";
import { ClaimTable } from "./claim-table.ts";
import { LEASES, type Claim } from "../core/claims.ts";

const UPSERT_TASK = `INSERT INTO tasks (${TASK_COLUMNS.join(", ")})
  VALUES (${TASK_COLUMNS.map(() => "?").join(", ")})
  ON CONFLICT (project_id, id) DO UPDATE SET
  ${TASK_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(", ")}`;

// A delivered notification stays delivered: enqueueing its id again must not resurrect it.
const UPSERT_NOTIFICATION = `INSERT INTO notifications
  (project_id, id, parent_session_id, task_id, text, wake, created_at, agent, model, visible) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (project_id, id) DO UPDATE SET parent_session_id = excluded.parent_session_id,
  task_id = excluded.task_id, text = excluded.text, wake = excluded.wake, created_at = excluded.created_at,
  agent = excluded.agent, model = excluded.model, visible = excluded.visible
  WHERE delivered_at IS NULL`;

const SELECT_SUMMARIES = `SELECT ${SUMMARY_COLUMNS.join(", ")} FROM tasks WHERE project_id = ?`;
// rowid breaks createdAt ties by first save, as the in-memory store does.
const SELECT_PROJECT_SUMMARIES = `${SELECT_SUMMARIES} ORDER BY created_at, rowid`;
const SELECT_CHANGED_SUMMARIES = `${SELECT_SUMMARIES} AND changed_seq > ? ORDER BY rowid`;
const SELECT_CHANGE_MARK = "SELECT seq, deleted_seq FROM task_changes";

const PURGEABLE = `SELECT id FROM tasks WHERE project_id = ? AND settled_at < ?
  AND status IN (SELECT value FROM json_each(?))`;
const IDS = "SELECT value FROM json_each(?)";
// Delivered notifications and events whose task is gone (removed before removal took them along).
const ORPHAN = "task_id NOT IN (SELECT id FROM tasks WHERE project_id = ?)";

/**
 * The durable TaskStore: one SQLite database shared by all projects, this instance scoped to one.
 * It owns its connection: `close` closes it.
 */
export class SqliteTaskStore implements TaskStore {
  private readonly statements = new StatementCache();
  private cache: TaskCache | undefined;
  /** PRAGMA data_version when the cache was last brought up to date. */
  private cacheDataVersion = 0;
  /** task_changes.seq up to which the cache holds every other connection's writes. */
  private cacheSeq = 0;
  /** Who drives each running task's child (migration 30). */
  private readonly claims: ClaimTable;
  /** Who sends each pending parent notification. */
  private readonly notificationClaims: ClaimTable;

  /** The task table alone on a connection of its own (tests and benchmarks); the plugin opens a Store. */
  static open({ path, projectId }: { path: string; projectId: string }): SqliteTaskStore {
    return new SqliteTaskStore(openDatabase(path, { create: true }), projectId);
  }

  constructor(
    /** Shared with the other repositories (Store), so their writes join this one's transactions. Tests reach it; src outside store does not. */
    readonly db: SqliteDatabase,
    readonly projectId: string,
    /** Before tasks are removed (in the removal's transaction): the Store writes the spend rows it keeps, so the removal takes them too. */
    private beforeRemove?: () => void,
  ) {
    const open = "status IN ('running', 'resumed')";
    this.claims = new ClaimTable(db, { table: "tasks", key: "id", byColumn: "claimed_by", atColumn: "claimed_at", open }, projectId, LEASES.taskMs);
    this.notificationClaims = new ClaimTable(db, {
      table: "notifications", key: "id", byColumn: "claimed_by", atColumn: "claimed_at", open: "delivered_at IS NULL", onClaim: "claims = claims + 1",
    }, projectId, LEASES.outboxMs);
  }

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

  list(filter: TaskFilter = {}): TaskSummary[] {
    return this.freshCache().list(filter);
  }

  /** Removes the task with its events and notifications, in one transaction. */
  remove(id: string): void {
    this.transaction(() => this.removeTasks([id], { keepUndelivered: false }));
  }

  appendEvent(event: TaskEvent): void {
    this.sql("INSERT INTO task_events (project_id, task_id, at, kind, detail) VALUES (?, ?, ?, ?, ?)").run(
      this.projectId,
      event.taskId,
      event.at,
      event.kind,
      event.detail === undefined ? null : maskSecrets(event.detail),
    );
  }

  events(taskId: string): TaskEvent[] {
    return this.sql("SELECT * FROM task_events WHERE project_id = ? AND task_id = ? ORDER BY id")
      .all(this.projectId, taskId)
      .map(rowToEvent);
  }

  enqueueNotification(n: PendingNotification): void {
    const params = [n.id, n.parentSessionID, n.taskId, n.text, n.wake ? 1 : 0, n.createdAt, n.agent ?? null, n.model ? JSON.stringify(n.model) : null, n.visible ?? null];
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

  claimNotification(notificationId: string, by: string, at: number): boolean {
    return this.notificationClaims.claim(notificationId, by, at);
  }

  releaseClaim(notificationId: string): void {
    this.sql("UPDATE notifications SET claimed_at = NULL, claimed_by = NULL WHERE project_id = ? AND id = ?").run(
      this.projectId,
      notificationId,
    );
  }

  claimTask(id: string, by: string, now: number, leaseMs: number): boolean {
    return this.claims.claim(id, by, now, leaseMs);
  }

  renewTaskClaims(by: string, now: number): Set<string> {
    return this.claims.renew(by, now);
  }

  releaseTask(id: string | undefined, by: string): void {
    if (id === undefined) this.claims.releaseAll(by);
    else this.claims.release(id, by);
  }

  taskClaim(id: string): Claim | undefined {
    return this.claims.holder(id);
  }

  /**
   * Retention: removes settled tasks whose settledAt is before cutoffMs, with their events and
   * their delivered notifications (undelivered ones stay until delivered), and the delivered
   * notifications and events left without a task. Returns how many tasks.
   */
  purgeOlderThan(cutoffMs: number): number {
    return this.transaction(() => {
      const ids = this.sql(PURGEABLE)
        .all(this.projectId, cutoffMs, JSON.stringify(SETTLED_STATUSES))
        .map((row) => row.id as string);
      this.removeTasks(ids, { keepUndelivered: true });
      this.sql(`DELETE FROM task_events WHERE project_id = ? AND ${ORPHAN}`).run(this.projectId, this.projectId);
      this.sql(`DELETE FROM notifications WHERE project_id = ? AND delivered_at IS NOT NULL AND ${ORPHAN}`).run(
        this.projectId,
        this.projectId,
      );
      return ids.length;
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

  private removeTasks(ids: string[], { keepUndelivered }: { keepUndelivered: boolean }): void {
    if (ids.length === 0) return;
    this.beforeRemove?.();
    const json = JSON.stringify(ids);
    const notifications = keepUndelivered ? "AND delivered_at IS NOT NULL" : "";
    this.sql(`DELETE FROM task_events WHERE project_id = ? AND task_id IN (${IDS})`).run(this.projectId, json);
    this.sql(`DELETE FROM notifications WHERE project_id = ? ${notifications} AND task_id IN (${IDS})`).run(this.projectId, json);
    this.sql(`DELETE FROM task_evidence WHERE project_id = ? AND task_id IN (${IDS})`).run(this.projectId, json);
    this.sql(`DELETE FROM task_evidence_specs WHERE project_id = ? AND task_id IN (${IDS})`).run(this.projectId, json);
    this.sql(`DELETE FROM task_spend WHERE project_id = ? AND task_id IN (${IDS})`).run(this.projectId, json);
    this.sql(`DELETE FROM tasks WHERE project_id = ? AND id IN (${IDS})`).run(this.projectId, json);
    for (const id of ids) this.cache?.delete(id);
  }

  /**
   * The cache, brought up to date when another connection (another plugin instance or process)
   * has committed since: SQLite's data_version tells, for the cost of one pragma, and only the
   * tasks written since the last look are read (their changed_seq is past the mark). This
   * connection's own writes keep the cache current as they happen.
   */
  private freshCache(): TaskCache {
    const dataVersion = Number(this.sql("PRAGMA data_version").get()?.data_version);
    if (this.cache && dataVersion === this.cacheDataVersion) return this.cache;
    // The mark is read first: every write up to it is committed, so the rows read next hold it.
    const mark = this.sql(SELECT_CHANGE_MARK).get()!;
    const seq = Number(mark.seq);
    if (!this.cache) {
      this.cache = new TaskCache(this.sql(SELECT_PROJECT_SUMMARIES).all(this.projectId).map(rowToSummary));
    } else if (seq !== this.cacheSeq) {
      for (const row of this.sql(SELECT_CHANGED_SUMMARIES).all(this.projectId, this.cacheSeq)) this.cache.put(rowToSummary(row));
      if (Number(mark.deleted_seq) > this.cacheSeq) this.cache.retainOnly(this.taskIds());
    }
    // Only now: a read that threw above is tried again on the next list.
    this.cacheSeq = seq;
    this.cacheDataVersion = dataVersion;
    return this.cache;
  }

  private taskIds(): Set<string> {
    return new Set(this.sql("SELECT id FROM tasks WHERE project_id = ?").all(this.projectId).map((row) => row.id as string));
  }

  /** Prepared statements are cached by their SQL text and reused. */
  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

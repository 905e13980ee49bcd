import type { SqliteDatabase } from "./sqlite-driver.ts";
import { StoreUnavailableError } from "./store-unavailable-error.ts";

export type Migration = { version: number; name: string; sql: string };

/**
 * Append-only. NEVER edit or reorder a migration once it has shipped: databases in the wild
 * have already applied it and will not run it again. Change the schema with a new one at the
 * end, and give any new NOT NULL column a DEFAULT so an older plugin can still insert rows.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "tasks, event log and notification outbox",
    sql: `
      CREATE TABLE tasks (
        project_id        TEXT    NOT NULL,
        id                TEXT    NOT NULL,
        parent_session_id TEXT    NOT NULL,
        batch_id          TEXT    NOT NULL,
        description       TEXT    NOT NULL,
        prompt            TEXT    NOT NULL,
        agent             TEXT    NOT NULL,
        model             TEXT    NOT NULL, -- JSON ModelRef
        parent_agent      TEXT    NOT NULL,
        parent_model      TEXT,             -- JSON ModelRef
        status            TEXT    NOT NULL,
        is_forked         INTEGER NOT NULL,
        resume_count      INTEGER NOT NULL,
        result            TEXT,
        error             TEXT,
        tool_calls        INTEGER NOT NULL,
        last_tools        TEXT    NOT NULL, -- JSON string[]
        last_activity_at  INTEGER NOT NULL,
        created_at        INTEGER NOT NULL,
        prompted_at       INTEGER NOT NULL,
        settled_at        INTEGER,
        retrieved_at      INTEGER,
        cleared_at        INTEGER,
        PRIMARY KEY (project_id, id)
      );
      CREATE INDEX tasks_by_project_created ON tasks (project_id, created_at);
      CREATE INDEX tasks_by_project_parent_created ON tasks (project_id, parent_session_id, created_at);
      CREATE INDEX tasks_by_project_status ON tasks (project_id, status, settled_at);

      CREATE TABLE task_events (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT    NOT NULL,
        task_id    TEXT    NOT NULL,
        at         INTEGER NOT NULL,
        kind       TEXT    NOT NULL,
        detail     TEXT
      );
      CREATE INDEX task_events_by_task ON task_events (project_id, task_id, id);

      CREATE TABLE notifications (
        project_id        TEXT    NOT NULL,
        id                TEXT    NOT NULL,
        parent_session_id TEXT    NOT NULL,
        task_id           TEXT    NOT NULL,
        text              TEXT    NOT NULL,
        wake              INTEGER NOT NULL,
        created_at        INTEGER NOT NULL,
        delivered_at      INTEGER,
        PRIMARY KEY (project_id, id)
      );
      CREATE INDEX notifications_pending ON notifications (project_id, parent_session_id, created_at)
        WHERE delivered_at IS NULL;
      CREATE INDEX notifications_by_task ON notifications (project_id, task_id);
    `,
  },
  {
    version: 2,
    name: "started time of a task (queued tasks start later than they are created)",
    sql: `ALTER TABLE tasks ADD COLUMN started_at INTEGER;`,
  },
];

const LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
)`;

/** Applies every migration not yet in the ledger, each in its own transaction. Returns their versions. */
export function migrate(db: SqliteDatabase, now: () => number = Date.now): number[] {
  db.exec(LEDGER);
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    // Checked again inside the write lock: another process may be migrating the same file.
    const ran = db.transaction(() => {
      if (isApplied(db, migration.version)) return false;
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        now(),
      );
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}

export function appliedVersions(db: SqliteDatabase): number[] {
  return db
    .prepare("SELECT version FROM schema_migrations ORDER BY version")
    .all()
    .map((row) => Number(row.version));
}

function isApplied(db: SqliteDatabase, version: number): boolean {
  return db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(version) !== undefined;
}

/**
 * Refuses a file that already holds other tables but no ledger of ours: dbPath pointed at
 * someone else's database, which must not be touched.
 */
export function assertOwnDatabase(db: SqliteDatabase): void {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()
    .map((row) => String(row.name));
  if (tables.length === 0 || tables.includes("schema_migrations")) return;
  throw new StoreUnavailableError(db.path, "foreign", `it holds other tables (${tables.slice(0, 3).join(", ")})`);
}

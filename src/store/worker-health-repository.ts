import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

export type WorkerHealthRow = { name: string; host: string; capacity: number; state: string; since: number; error?: string; checkedAt: number };

/** Each worker's health, written where the dashboard (another process) reads it (migration 15). */
export class WorkerHealthRepository {
  private statements = new StatementCache();

  constructor(private db: SqliteDatabase, readonly projectId: string) {}

  save(row: WorkerHealthRow): void {
    this.sql(`INSERT INTO worker_health (project_id, name, host, capacity, state, since, error, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, name) DO UPDATE SET host = excluded.host, capacity = excluded.capacity, state = excluded.state,
      since = excluded.since, error = excluded.error, checked_at = excluded.checked_at`)
      .run(this.projectId, row.name, row.host, row.capacity, row.state, row.since, row.error ?? null, row.checkedAt);
  }

  /** Workers no longer configured leave the list. */
  keepOnly(names: string[]): void {
    const all = this.sql("SELECT name FROM worker_health WHERE project_id = ?").all(this.projectId).map((r) => String(r.name));
    const remove = this.sql("DELETE FROM worker_health WHERE project_id = ? AND name = ?");
    for (const name of all.filter((n) => !names.includes(n))) remove.run(this.projectId, name);
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

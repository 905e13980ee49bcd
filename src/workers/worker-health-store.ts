import type { SqliteDatabase } from "../store/sqlite-driver.ts";

export type WorkerHealthRow = { name: string; host: string; capacity: number; state: string; since: number; error?: string; checkedAt: number };

/** Writes each worker's health where the dashboard (another process) reads it (migration 15). */
export class WorkerHealthStore {
  constructor(private db: SqliteDatabase, private projectId: string) {}

  save(row: WorkerHealthRow): void {
    this.db.prepare(`INSERT INTO worker_health (project_id, name, host, capacity, state, since, error, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, name) DO UPDATE SET host = excluded.host, capacity = excluded.capacity, state = excluded.state,
      since = excluded.since, error = excluded.error, checked_at = excluded.checked_at`)
      .run(this.projectId, row.name, row.host, row.capacity, row.state, row.since, row.error ?? null, row.checkedAt);
  }

  /** Workers no longer configured leave the list. */
  keepOnly(names: string[]): void {
    const all = this.db.prepare("SELECT name FROM worker_health WHERE project_id = ?").all(this.projectId).map((r) => String(r.name));
    for (const name of all.filter((n) => !names.includes(n))) this.db.prepare("DELETE FROM worker_health WHERE project_id = ? AND name = ?").run(this.projectId, name);
  }
}

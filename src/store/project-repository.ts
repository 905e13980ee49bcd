import type { SqliteDatabase } from "./sqlite-driver.ts";

/** The projects table (migration 9): where each project lives, for the dashboard's names. */
export class ProjectRepository {
  constructor(private db: SqliteDatabase) {}

  /** Remembers where a project lives (one upsert at plugin start); the last plugin loaded wins. */
  record(projectId: string, directory: string, at: number): void {
    this.db.prepare(`INSERT INTO projects (project_id, directory, last_seen_at) VALUES (?, ?, ?)
      ON CONFLICT (project_id) DO UPDATE SET directory = excluded.directory, last_seen_at = excluded.last_seen_at`)
      .run(projectId, directory, at);
  }
}

/** The folder the plugin was loaded for: the git worktree, or the directory outside git (worktree is then "/"). */
export function projectDirectory(input: { directory: string; worktree?: string }): string {
  return input.worktree && input.worktree !== "/" ? input.worktree : input.directory;
}

import type { ReadConnection } from "./read-connection.ts";

/** A worker (another OpenCode server) as its project's OpenCode last saw it (migration 15), with the tasks it holds. */
export type ProjectWorker = {
  projectId: string; name: string; host: string; capacity: number;
  /** unknown | healthy | unreachable | unauthorized | misconfigured */
  state: string; since: number; error?: string; checkedAt: number;
  /** Its tasks running (or resumed) now, and those queued for it. */
  running: number; queued: number;
};

/** Workers across every project, with the tasks each holds; none before migration 15. */
export class WorkerReads {
  constructor(private readonly connection: ReadConnection) {}

  /** Every project's workers by project and name, with the tasks each runs and has queued. */
  list(projectId?: string): ProjectWorker[] {
    if (!this.connection.has("worker_health")) return [];
    const count = (statuses: string) => `(SELECT count(*) FROM tasks t WHERE t.project_id = h.project_id AND t.status IN (${statuses}) AND t.worker = h.name)`;
    return this.connection.sql(`SELECT h.*, ${count("'running', 'resumed'")} AS running, ${count("'queued'")} AS queued FROM worker_health h
      ${projectId ? "WHERE h.project_id = ?" : ""} ORDER BY h.project_id, h.name`).all(...(projectId ? [projectId] : [])).map((row) => ({
      projectId: String(row.project_id), name: String(row.name), host: String(row.host), capacity: Number(row.capacity), state: String(row.state),
      since: Number(row.since), ...(row.error == null ? {} : { error: String(row.error) }), checkedAt: Number(row.checked_at),
      running: Number(row.running), queued: Number(row.queued),
    }));
  }
}

/** A worker the plugin cannot use now (not merely not checked yet). */
export function workerUnhealthy(worker: Pick<ProjectWorker, "state">): boolean {
  return worker.state !== "healthy" && worker.state !== "unknown";
}

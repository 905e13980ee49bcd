import type { InboxCommand } from "../../inbox/inbox-command.ts";
import { rowToCommand } from "../command-repository.ts";
import { AutomationReads } from "./automation-reads.ts";
import { ReadConnection } from "./read-connection.ts";
import { SpendReads } from "./spend-reads.ts";
import { TaskReads } from "./task-reads.ts";
import { WorkerReads } from "./worker-reads.ts";

export type ProjectRef = { id: string; directory?: string };

/**
 * What the command line and the dashboard read, across every project, split by concern: tasks,
 * automations (with their runs), workers and spend. The plugin itself writes through the Store, scoped
 * to one project. One read-only connection that never blocks the plugin's writers; the
 * dashboard's queries are bounded, so a page costs the same with 10 or 10,000 tasks stored.
 */
export class ReadModel {
  readonly tasks: TaskReads;
  readonly automations: AutomationReads;
  readonly workers: WorkerReads;
  readonly spend: SpendReads;

  /** Opens read-only; never creates the file. Throws StoreUnavailableError. */
  static open(path: string): ReadModel {
    return new ReadModel(ReadConnection.open(path));
  }

  private constructor(private readonly connection: ReadConnection) {
    this.tasks = new TaskReads(connection);
    this.automations = new AutomationReads(connection);
    this.workers = new WorkerReads(connection);
    this.spend = new SpendReads(connection);
  }

  get path(): string {
    return this.connection.db.path;
  }

  /** Changes whenever another connection commits: one pragma, no table read. */
  dataVersion(): number {
    return this.connection.dataVersion();
  }

  schemaVersions(): number[] {
    return this.connection.sql("SELECT version FROM schema_migrations ORDER BY version").all().map((row) => Number(row.version));
  }

  /** Every project with tasks or automations, with its directory where the plugin recorded it (migration 9). */
  projects(): ProjectRef[] {
    const parts = ["SELECT DISTINCT project_id FROM tasks"];
    if (this.connection.has("automations")) parts.push("SELECT DISTINCT project_id FROM automations");
    const ids = `SELECT project_id FROM (${parts.join(" UNION ")})`;
    const text = this.connection.has("projects")
      ? `SELECT i.project_id, p.directory FROM (${ids}) i LEFT JOIN projects p ON p.project_id = i.project_id ORDER BY 1`
      : `${ids} ORDER BY 1`;
    return this.connection.sql(text).all().map((row) => ({ id: String(row.project_id), ...(typeof row.directory === "string" ? { directory: row.directory } : {}) }));
  }

  /** Commands from the dashboard and the command line to a project's plugin, newest first. */
  commands(projectId?: string, limit = 20): InboxCommand[] {
    if (!this.connection.has("dashboard_commands")) return [];
    return this.connection.sql(`SELECT * FROM dashboard_commands ${projectId ? "WHERE project_id = ?" : ""} ORDER BY id DESC LIMIT ${limit}`)
      .all(...(projectId ? [projectId] : [])).map(rowToCommand);
  }

  close(): void {
    this.connection.close();
  }
}

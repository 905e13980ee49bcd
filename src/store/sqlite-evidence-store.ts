import type { EvidenceRow, EvidenceStore, TaskEvidenceSpec } from "../evidence/evidence-types.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

const UPSERT_ROW = `INSERT INTO task_evidence (project_id, task_id, run, kind, key, data) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (project_id, task_id, run, kind, key) DO UPDATE SET data = excluded.data`;
const UPSERT_SPEC = `INSERT INTO task_evidence_specs (project_id, task_id, spec) VALUES (?, ?, ?)
  ON CONFLICT (project_id, task_id) DO UPDATE SET spec = excluded.spec`;

/**
 * Evidence rows in the plugin's database, on the task store's own connection, so that rows
 * written inside a settle's transaction commit with it.
 */
export class SqliteEvidenceStore implements EvidenceStore {
  private statements = new StatementCache();

  constructor(private db: SqliteDatabase, private projectId: string) {}

  put(row: EvidenceRow): void {
    this.sql(UPSERT_ROW).run(this.projectId, row.taskId, row.run, row.kind, row.key, JSON.stringify(row.data));
  }

  rows(taskId: string, run?: number): EvidenceRow[] {
    const byRun = run === undefined ? "" : "AND run = ?";
    const params = run === undefined ? [this.projectId, taskId] : [this.projectId, taskId, run];
    return this.sql(`SELECT * FROM task_evidence WHERE project_id = ? AND task_id = ? ${byRun} ORDER BY run, rowid`)
      .all(...params)
      .map((r) => ({ taskId, run: Number(r.run), kind: r.kind as EvidenceRow["kind"], key: String(r.key), data: JSON.parse(String(r.data)) }));
  }

  putSpec(taskId: string, spec: TaskEvidenceSpec): void {
    this.sql(UPSERT_SPEC).run(this.projectId, taskId, JSON.stringify(spec));
  }

  spec(taskId: string): TaskEvidenceSpec | undefined {
    const row = this.sql("SELECT spec FROM task_evidence_specs WHERE project_id = ? AND task_id = ?").get(this.projectId, taskId);
    return row ? (JSON.parse(String(row.spec)) as TaskEvidenceSpec) : undefined;
  }

  /** Drops the evidence of tasks that no longer exist (purged by retention, or deleted with their parent). */
  purgeOrphans(): void {
    for (const table of ["task_evidence", "task_evidence_specs"]) {
      this.sql(`DELETE FROM ${table} WHERE project_id = ? AND task_id NOT IN (SELECT id FROM tasks WHERE project_id = ?)`).run(this.projectId, this.projectId);
    }
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

import type { SqliteDatabase } from "./sqlite-driver.ts";

/** Whether the project has an automation or a proposal (proposals are automation rows): one primary-key lookup, made at plugin start. */
export function projectHasAutomations(db: SqliteDatabase, projectId: string): boolean {
  return db.prepare("SELECT 1 FROM automations WHERE project_id = ? LIMIT 1").get(projectId) !== undefined;
}

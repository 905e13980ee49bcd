import type { SqliteDatabase, SqliteStatement, SqlValue } from "./sqlite-driver.ts";
import type { Automation, Run, RunStatus, Trigger } from "../automations/automation.ts";
import { AUTOMATION_COLUMNS, automationToParams, rowToAutomation, rowToRun, rowToTrigger, specToJson } from "./automation-rows.ts";
import { StatementCache } from "./statement-cache.ts";
import { rowToRunDay, type RunDay } from "./run-history-fold.ts";
import { RunClaims } from "./run-claims.ts";
import type { Spend } from "../cost/spend.ts";

const UPSERT_AUTOMATION = `INSERT INTO automations (${AUTOMATION_COLUMNS.join(", ")})
  VALUES (${AUTOMATION_COLUMNS.map(() => "?").join(", ")})
  ON CONFLICT (project_id, id) DO UPDATE SET
  ${AUTOMATION_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(", ")}`;

/** A run row to insert; the id is given by the database. */
export type NewRun = Omit<Run, "id">;

const RUN_FIELDS: [keyof NewRun, string][] = [
  ["automationId", "automation_id"], ["runNo", "run_no"], ["triggerId", "trigger_id"], ["firedBy", "fired_by"],
  ["plannedAt", "planned_at"], ["status", "status"], ["skipReason", "skip_reason"], ["missedCount", "missed_count"],
  ["missedUntil", "missed_until"], ["taskId", "task_id"], ["createdAt", "created_at"], ["startedAt", "started_at"],
  ["endedAt", "ended_at"], ["resultHash", "result_hash"], ["summary", "summary"], ["notified", "notified"],
  ["notifyNote", "notify_note"], ["eventSummary", "event_summary"], ["eventData", "event_data"], ["eventFolded", "event_folded"], ["eventKey", "event_key"],
  ["steps", "steps"], ["stepsBy", "steps_by"], ["spentBefore", "spent_before"],
  ["branch", "branch"], ["skipCount", "skip_count"],
];

const sqlValue = (value: unknown): SqlValue => {
  if (value === undefined) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  return typeof value === "object" && value !== null ? JSON.stringify(value) : (value as SqlValue);
};

const SUMS = `SUM(s.input) AS input, SUM(s.output) AS output, SUM(s.reasoning) AS reasoning, SUM(s.cache_read) AS cache_read,
  SUM(s.cache_write) AS cache_write, SUM(s.cost_usd) AS cost_usd, COUNT(*) AS requests`;
// Each root with every task below it (cleared ones too: they spent all the same); UNION stops a cycle.
// CROSS JOIN keeps the tree outside: left to itself the planner scans every task of the project (4 ms for 200 runs, not 0.3).
const TREE_SPEND = `WITH RECURSIVE tree(root, id) AS (
    SELECT value, value FROM json_each(?)
    UNION SELECT tree.root, t.id FROM tree CROSS JOIN tasks t ON t.project_id = ? AND t.parent_session_id = tree.id)
  SELECT tree.root, ${SUMS} FROM tree CROSS JOIN task_spend s ON s.project_id = ? AND s.task_id = tree.id GROUP BY tree.root`;
// The first run since a time of each task the automation's runs used (a continued session serves several).
const FIRST_RUN_TASKS = `SELECT r.task_id, r.spent_before FROM automation_runs r
  WHERE r.project_id = ? AND r.automation_id = ? AND r.created_at >= ? AND r.task_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM automation_runs x WHERE x.project_id = r.project_id AND x.automation_id = r.automation_id
    AND x.task_id = r.task_id AND x.created_at >= ? AND x.id < r.id)`;

/**
 * Automations, their triggers and their run history, in the plugin's SQLite database (migration 4),
 * scoped to one project. It shares the task store's connection, so that a run row written in a
 * settle listener commits with the settle.
 */
export class AutomationRepository {
  private statements = new StatementCache();

  /** Who holds each active run (run-claims.ts). */
  readonly runClaims: RunClaims;

  constructor(private db: SqliteDatabase, readonly projectId: string) {
    this.runClaims = new RunClaims(db, projectId);
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn);
  }

  saveAutomation(a: Automation): void {
    this.sql(UPSERT_AUTOMATION).run(...automationToParams(this.projectId, a));
  }

  automation(id: string): Automation | undefined {
    const row = this.sql("SELECT * FROM automations WHERE project_id = ? AND id = ?").get(this.projectId, id);
    return row && rowToAutomation(row);
  }

  automations(): Automation[] {
    return this.sql("SELECT * FROM automations WHERE project_id = ? ORDER BY created_at, rowid").all(this.projectId).map(rowToAutomation);
  }

  /** Removes the automation, its triggers and its runs that have not started; history stays. */
  deleteAutomation(id: string): void {
    this.sql("DELETE FROM automations WHERE project_id = ? AND id = ?").run(this.projectId, id);
    this.sql("DELETE FROM automation_triggers WHERE project_id = ? AND automation_id = ?").run(this.projectId, id);
    this.sql("DELETE FROM automation_runs WHERE project_id = ? AND automation_id = ? AND status = 'waiting'").run(this.projectId, id);
    this.forgetRemovedTriggers();
  }

  saveTrigger(t: Trigger): void {
    this.sql(`INSERT INTO automation_triggers (project_id, id, automation_id, kind, spec, created_at, last_planned_at, next_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, id) DO UPDATE SET
      last_planned_at = excluded.last_planned_at, next_at = excluded.next_at`).run(
      this.projectId, t.id, t.automationId, t.spec.kind, specToJson(t.spec), t.createdAt, t.lastPlannedAt ?? null, t.nextAt ?? null,
    );
  }

  trigger(id: string): Trigger | undefined {
    const row = this.sql("SELECT * FROM automation_triggers WHERE project_id = ? AND id = ?").get(this.projectId, id);
    return row && rowToTrigger(row);
  }

  triggers(automationId?: string): Trigger[] {
    const sql = automationId
      ? "SELECT * FROM automation_triggers WHERE project_id = ? AND automation_id = ? ORDER BY created_at, rowid"
      : "SELECT * FROM automation_triggers WHERE project_id = ? ORDER BY created_at, rowid";
    return this.sql(sql).all(...(automationId ? [this.projectId, automationId] : [this.projectId])).map(rowToTrigger);
  }

  removeTrigger(id: string): void {
    this.sql("DELETE FROM automation_triggers WHERE project_id = ? AND id = ?").run(this.projectId, id);
    this.forgetRemovedTriggers();
  }

  /** A removed event trigger's webhook name, lease and deliveries go with it. */
  private forgetRemovedTriggers(): void {
    for (const table of ["webhooks", "trigger_leases", "webhook_deliveries"]) {
      this.sql(`DELETE FROM ${table} WHERE project_id = ? AND trigger_id NOT IN (SELECT id FROM automation_triggers WHERE project_id = ?)`)
        .run(this.projectId, this.projectId);
    }
  }

  /** Triggers of automations that may fire (enabled, not done) with an occurrence at or before `until`. */
  dueTriggers(until: number): Trigger[] {
    return this.sql(`SELECT t.* FROM automation_triggers t JOIN automations a ON a.project_id = t.project_id AND a.id = t.automation_id
      WHERE t.project_id = ? AND a.enabled = 1 AND a.done_at IS NULL AND t.next_at IS NOT NULL AND t.next_at <= ?
      ORDER BY t.next_at`).all(this.projectId, until).map(rowToTrigger);
  }

  /** The earliest next occurrence of any trigger that may fire, or undefined. */
  nextDueAt(): number | undefined {
    const row = this.sql(`SELECT min(t.next_at) AS at FROM automation_triggers t JOIN automations a
      ON a.project_id = t.project_id AND a.id = t.automation_id
      WHERE t.project_id = ? AND a.enabled = 1 AND a.done_at IS NULL`).get(this.projectId);
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  /** Inserts a run row; undefined when its (trigger, planned time) is already taken: another process fired it. */
  insertRun(run: NewRun): Run | undefined {
    const columns = RUN_FIELDS.map(([, c]) => c);
    const result = this.sql(`INSERT INTO automation_runs (project_id, ${columns.join(", ")})
      VALUES (?, ${columns.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`)
      .run(this.projectId, ...RUN_FIELDS.map(([k]) => sqlValue(run[k])));
    if (result.changes === 0) return undefined;
    const id = Number(this.sql("SELECT last_insert_rowid() AS id").get()!.id);
    return { ...run, id } as Run;
  }

  updateRun(id: number, fields: Partial<NewRun>): void {
    const entries = RUN_FIELDS.filter(([k]) => k in fields);
    if (entries.length === 0) return;
    this.sql(`UPDATE automation_runs SET ${entries.map(([, c]) => `${c} = ?`).join(", ")} WHERE project_id = ? AND id = ?`)
      .run(...entries.map(([k]) => sqlValue(fields[k])), this.projectId, id);
  }

  run(id: number): Run | undefined {
    const row = this.sql("SELECT * FROM automation_runs WHERE project_id = ? AND id = ?").get(this.projectId, id);
    return row && rowToRun(row);
  }

  /** Newest first. */
  runs(automationId: string, limit = 20): Run[] {
    return this.sql("SELECT * FROM automation_runs WHERE project_id = ? AND automation_id = ? ORDER BY id DESC LIMIT ?")
      .all(this.projectId, automationId, limit).map(rowToRun);
  }

  /**
   * The newest row the trigger fired (`triggerId` undefined: task_run's, which have none), and
   * whether a row of the automation that is not a skip came after it (a run broke its streak).
   */
  latestOfTrigger(automationId: string, triggerId: string | undefined): { run: Run; runSince: boolean } | undefined {
    // "+": walk the automation's rows newest first (a few steps), not every row the trigger ever fired.
    const row = this.sql("SELECT * FROM automation_runs WHERE project_id = ? AND automation_id = ? AND +trigger_id IS ? ORDER BY id DESC LIMIT 1")
      .get(this.projectId, automationId, triggerId ?? null);
    if (!row) return undefined;
    const after = this.sql("SELECT 1 FROM automation_runs WHERE project_id = ? AND automation_id = ? AND id > ? AND status != 'skipped' LIMIT 1")
      .get(this.projectId, automationId, row.id as number);
    return { run: rowToRun(row), runSince: after !== undefined };
  }

  /** Whether the trigger has a row for the event named `key` already (fired, waiting, skipped or folded into one). */
  firedEvent(triggerId: string, key: string): boolean {
    return this.sql("SELECT 1 FROM automation_runs WHERE project_id = ? AND trigger_id = ? AND event_key = ?").get(this.projectId, triggerId, key) !== undefined;
  }

  runsWithStatus(automationId: string, statuses: readonly RunStatus[]): Run[] {
    return this.sql(`SELECT * FROM automation_runs WHERE project_id = ? AND automation_id = ?
      AND status IN (SELECT value FROM json_each(?)) ORDER BY id`).all(this.projectId, automationId, JSON.stringify(statuses)).map(rowToRun);
  }

  /** The unfinished run of a task (a continued session has one per run, one at a time). */
  activeRunOfTask(taskId: string): Run | undefined {
    const row = this.sql(`SELECT * FROM automation_runs WHERE project_id = ? AND task_id = ?
      AND status IN ('starting', 'running') ORDER BY id DESC LIMIT 1`).get(this.projectId, taskId);
    return row && rowToRun(row);
  }

  runByNumber(automationId: string, runNo: number): Run | undefined {
    const row = this.sql("SELECT * FROM automation_runs WHERE project_id = ? AND automation_id = ? AND run_no = ?").get(this.projectId, automationId, runNo);
    return row && rowToRun(row);
  }

  /** Older quiet runs folded by UTC day (run-history-fold.ts), newest first. */
  runDays(automationId: string, limit: number): RunDay[] {
    return this.sql("SELECT * FROM automation_run_days WHERE project_id = ? AND automation_id = ? ORDER BY day DESC LIMIT ?")
      .all(this.projectId, automationId, limit).map(rowToRunDay);
  }

  /** Retention: history rows that ended before the cutoff go (waiting and active runs stay). */
  purgeRunsOlderThan(cutoffMs: number): number {
    return this.sql(`DELETE FROM automation_runs WHERE project_id = ? AND coalesce(ended_at, created_at) < ?
      AND status NOT IN ('waiting', 'starting', 'running')`).run(this.projectId, cutoffMs).changes;
  }

  /**
   * The automation's owner is told its daily budget was reached on `day`: true for the one caller
   * that sets it (whichever process), false when it was told that day already.
   */
  claimBudgetNotice(automationId: string, day: string): boolean {
    return this.sql("UPDATE automations SET budget_told_on = ? WHERE project_id = ? AND id = ? AND budget_told_on IS NOT ?")
      .run(day, this.projectId, automationId, day).changes > 0;
  }

  /** Each task the automation's runs since `since` used, with what its tree had spent before the first of them (continued sessions). */
  runTasksSince(automationId: string, since: number): { taskId: string; spentBefore?: Spend }[] {
    return this.sql(FIRST_RUN_TASKS).all(this.projectId, automationId, since, since).map((r) => ({
      taskId: String(r.task_id), ...(typeof r.spent_before === "string" ? { spentBefore: JSON.parse(r.spent_before) as Spend } : {}),
    }));
  }

  /** Each task's spend with its descendants' (every process's, from the database); tasks with none are absent. */
  treeSpends(taskIds: readonly string[]): Map<string, Spend> {
    const out = new Map<string, Spend>();
    if (taskIds.length === 0) return out;
    for (const r of this.sql(TREE_SPEND).all(JSON.stringify(taskIds), this.projectId, this.projectId)) {
      out.set(String(r.root), {
        tokens: { input: Number(r.input), output: Number(r.output), reasoning: Number(r.reasoning), cacheRead: Number(r.cache_read), cacheWrite: Number(r.cache_write) },
        costUsd: Number(r.cost_usd), requests: Number(r.requests),
      });
    }
    return out;
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

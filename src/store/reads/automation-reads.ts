import type { Automation, Run, Trigger } from "../../automations/automation.ts";
import { rowToAutomation, rowToRun, rowToTrigger } from "../automation-rows.ts";
import type { SqlRow, SqlValue } from "../sqlite-driver.ts";
import type { ReadConnection } from "./read-connection.ts";
import { rowToRunDay, type RunDay } from "../run-history-fold.ts";

export type ProjectAutomation = Automation & { projectId: string; triggers: Trigger[]; lastRun?: Run };
export type ProjectRun = RunWithTask & { projectId: string; title?: string };
/** A run with where its task's child ran: a worker's name, null on the local OpenCode; absent when it has no task (or it is gone). */
export type RunWithTask = Run & { taskWorker?: string | null };
export type RunFilter = { status?: string; trigger?: string; from?: number; to?: number; limit?: number };
export type ChannelFailure = {
  projectId: string; automationId: string; title?: string; runNo?: number; channel: string; host: string; attempts: number; lastError?: string; endedAt: number;
};
export type ProjectWebhook = { name: string; projectId: string; triggerId: string; automationId: string; title?: string; url?: string; secret: string; waiting: number };

/**
 * Automations across every project, with their triggers, runs, webhooks and channel deliveries;
 * empty in a database from before the automation tables.
 */
export class AutomationReads {
  constructor(private readonly connection: ReadConnection) {}

  list(projectId?: string, limit = 500): ProjectAutomation[] {
    if (!this.connection.has("automations")) return [];
    const rows = this.connection.sql(`SELECT * FROM automations ${projectId ? "WHERE project_id = ?" : ""} ORDER BY created_at, rowid LIMIT ${limit}`)
      .all(...(projectId ? [projectId] : []));
    return rows.map((row) => this.withTriggers(row));
  }

  get(projectId: string, id: string): ProjectAutomation | undefined {
    if (!this.connection.has("automations")) return undefined;
    const row = this.connection.sql("SELECT * FROM automations WHERE project_id = ? AND id = ?").get(projectId, id);
    return row && this.withTriggers(row);
  }

  /** Newest first, filtered by status, trigger id (or "manual"), and time (rows from `from` on, created before `to`). */
  runs(projectId: string, automationId: string, filter: RunFilter = {}): RunWithTask[] {
    if (!this.connection.has("automation_runs")) return [];
    const where = ["project_id = ?", "automation_id = ?"];
    const params: SqlValue[] = [projectId, automationId];
    if (filter.status) (where.push("status = ?"), params.push(filter.status));
    if (filter.trigger === "manual") where.push("trigger_id IS NULL");
    else if (filter.trigger) (where.push("trigger_id = ?"), params.push(filter.trigger));
    // A row that lasts (a run, a streak of skipped firings) is in the window when it ends in it.
    if (filter.from !== undefined) (where.push("coalesce(ended_at, created_at) >= ?"), params.push(filter.from));
    if (filter.to !== undefined) (where.push("created_at < ?"), params.push(filter.to));
    params.push(filter.limit ?? 100);
    return this.connection.sql(`SELECT r.*, ${this.taskWorker()} FROM automation_runs r WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`)
      .all(...params).map(toRunWithTask);
  }

  /** The automation's older quiet runs, folded by UTC day (store/run-history-fold.ts), newest first. */
  runDays(projectId: string, automationId: string, limit = 30): RunDay[] {
    if (!this.connection.has("automation_run_days")) return [];
    return this.connection.sql("SELECT * FROM automation_run_days WHERE project_id = ? AND automation_id = ? ORDER BY day DESC LIMIT ?")
      .all(projectId, automationId, limit).map(rowToRunDay);
  }

  /**
   * The run a task is in, by the run's task_id column: the newest run linked to it, since a
   * continued session's later runs resume the same task (whose batch id still names the first).
   * Undefined for a task no run launched.
   */
  runOfTask(projectId: string, taskId: string): { automationId: string; runNo: number } | undefined {
    if (!this.connection.has("automation_runs")) return undefined;
    const row = this.connection.sql("SELECT automation_id, run_no FROM automation_runs WHERE project_id = ? AND task_id = ? AND run_no IS NOT NULL ORDER BY id DESC LIMIT 1").get(projectId, taskId);
    return row && { automationId: String(row.automation_id), runNo: Number(row.run_no) };
  }

  /** Recent runs of every automation, newest first, with the automation's title. */
  recentRuns(projectId?: string, limit = 20): ProjectRun[] {
    if (!this.connection.has("automation_runs")) return [];
    return this.connection.sql(`SELECT r.*, a.title AS title, ${this.taskWorker()} FROM automation_runs r LEFT JOIN automations a
      ON a.project_id = r.project_id AND a.id = r.automation_id ${projectId ? "WHERE r.project_id = ?" : ""}
      ORDER BY r.id DESC LIMIT ${limit}`).all(...(projectId ? [projectId] : []))
      .map((row) => ({ ...toRunWithTask(row), projectId: String(row.project_id), title: row.title === null ? undefined : String(row.title) }));
  }

  /** Channel deliveries given up since `since`: the dashboard's needs-attention list (name and host only, never a URL). */
  channelFailures(since: number, projectId?: string): ChannelFailure[] {
    if (!this.connection.has("channel_deliveries")) return [];
    return this.connection.sql(`SELECT d.project_id, d.automation_id, d.channel, d.host, d.attempts, d.last_error, d.ended_at, r.run_no, a.title
      FROM channel_deliveries d LEFT JOIN automation_runs r ON r.project_id = d.project_id AND r.id = d.run_id
      LEFT JOIN automations a ON a.project_id = d.project_id AND a.id = d.automation_id
      WHERE d.status = 'failed' AND d.ended_at >= ? ${projectId ? "AND d.project_id = ?" : ""} ORDER BY d.ended_at DESC LIMIT 50`)
      .all(...(projectId ? [since, projectId] : [since])).map((row) => ({
        projectId: String(row.project_id), automationId: String(row.automation_id), title: row.title == null ? undefined : String(row.title),
        runNo: row.run_no == null ? undefined : Number(row.run_no), channel: String(row.channel), host: String(row.host),
        attempts: Number(row.attempts), lastError: row.last_error == null ? undefined : String(row.last_error), endedAt: Number(row.ended_at),
      }));
  }

  /** Every project's webhooks: name, project, trigger, automation, URL and secret (the CLI hides it unless asked). */
  webhooks(projectId?: string): ProjectWebhook[] {
    if (!this.connection.has("webhooks")) return [];
    return this.connection.sql(`SELECT w.name, w.project_id, w.trigger_id, w.secret, t.automation_id, t.spec, a.title,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.trigger_id = w.trigger_id AND d.status IN ('pending', 'claimed')) AS waiting
      FROM webhooks w JOIN automation_triggers t ON t.project_id = w.project_id AND t.id = w.trigger_id
      LEFT JOIN automations a ON a.project_id = t.project_id AND a.id = t.automation_id
      ${projectId ? "WHERE w.project_id = ?" : ""} ORDER BY w.created_at`).all(...(projectId ? [projectId] : [])).map((row) => ({
      name: String(row.name), projectId: String(row.project_id), triggerId: String(row.trigger_id), automationId: String(row.automation_id),
      title: row.title == null ? undefined : String(row.title), url: (JSON.parse(String(row.spec)) as { url?: string }).url,
      secret: String(row.secret), waiting: Number(row.waiting),
    }));
  }

  private withTriggers(row: SqlRow): ProjectAutomation {
    const a = rowToAutomation(row);
    const projectId = String(row.project_id);
    const triggers = this.connection.sql("SELECT * FROM automation_triggers WHERE project_id = ? AND automation_id = ? ORDER BY created_at, rowid")
      .all(projectId, a.id).map(rowToTrigger);
    const last = this.connection.sql("SELECT * FROM automation_runs WHERE project_id = ? AND automation_id = ? ORDER BY id DESC LIMIT 1").get(projectId, a.id);
    return { ...a, projectId, triggers, ...(last ? { lastRun: rowToRun(last) } : {}) };
  }

  /** The column task_worker of a run `r`: its task's worker, '' when local, NULL when there is no such task (local only before migration 15). */
  private taskWorker(): string {
    const worker = this.connection.has("worker_health") ? "coalesce(t.worker, '')" : "''";
    return `(SELECT ${worker} FROM tasks t WHERE t.project_id = r.project_id AND t.id = r.task_id) AS task_worker`;
  }
}

function toRunWithTask(row: SqlRow): RunWithTask {
  const run: RunWithTask = rowToRun(row);
  if (typeof row.task_worker === "string") run.taskWorker = row.task_worker || null;
  return run;
}

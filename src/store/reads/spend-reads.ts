import type { Spend } from "../../cost/spend.ts";
import type { SqlRow } from "../sqlite-driver.ts";
import type { ReadConnection } from "./read-connection.ts";

/** A task by project and id, as the spend reads take and key them. */
export type TaskRef = { projectId: string; id: string };
/** A task's own spend (its child session's model requests) with what `costs` groups it by. */
export type SpentTask = TaskRef & { parentId: string; createdAt: number; model: string; spend: Spend };
/** Every task with its parent, spent or not: the links `costs` walks up to find who launched a spend. */
export type TaskLink = TaskRef & { parentId: string; createdAt: number };
/** A task an automation run launched (the first run that linked it), with the automation's title. */
export type RunTask = TaskRef & { automationId: string; title?: string };
/** One model request of a task's child session (one assistant message), as the store keeps it: no model, no time. */
export type SpentRequest = { messageId: string; spend: Spend };
/** Firings an automation skipped for its daily budget since a time: how many, and the newest reason. */
export type BudgetSkip = { projectId: string; automationId: string; title?: string; count: number; reason: string; at: number };

const SUMS = `SUM(s.input) AS input, SUM(s.output) AS output, SUM(s.reasoning) AS reasoning, SUM(s.cache_read) AS cache_read,
  SUM(s.cache_write) AS cache_write, SUM(s.cost_usd) AS cost_usd, COUNT(*) AS requests`;

// Each root with every task below it (cleared ones too: they spent all the same); UNION stops a cycle.
const TREES = `WITH RECURSIVE tree(project_id, root, id) AS (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[1]') FROM json_each(?)
    UNION SELECT tree.project_id, tree.root, t.id FROM tree JOIN tasks t ON t.project_id = tree.project_id AND t.parent_session_id = tree.id)
  SELECT tree.project_id, tree.root, ${SUMS} FROM tree JOIN task_spend s ON s.project_id = tree.project_id AND s.task_id = tree.id
  GROUP BY tree.project_id, tree.root`;

/** What model requests cost, per task and per task tree; empty in a database from before migration 21. */
export class SpendReads {
  constructor(private readonly connection: ReadConnection) {}

  /**
   * Each task's spend with its descendants' (the same sum background_output shows), keyed by
   * `spendKey`; tasks without any model request are absent.
   */
  trees(tasks: readonly TaskRef[]): Map<string, Spend> {
    const out = new Map<string, Spend>();
    if (tasks.length === 0 || !this.connection.has("task_spend")) return out;
    const roots = JSON.stringify(tasks.map((t) => [t.projectId, t.id]));
    for (const row of this.connection.sql(TREES).all(roots)) out.set(spendKey(String(row.project_id), String(row.root)), toSpend(row));
    return out;
  }

  /** Every task's own spend, with its parent, creation time and model (`providerID/modelID`). */
  spentTasks(projectId?: string): SpentTask[] {
    if (!this.connection.has("task_spend")) return [];
    return this.connection.sql(`SELECT t.project_id, t.id, t.parent_session_id, t.created_at, t.model, ${SUMS}
      FROM task_spend s JOIN tasks t ON t.project_id = s.project_id AND t.id = s.task_id
      ${projectId ? "WHERE s.project_id = ?" : ""} GROUP BY t.project_id, t.id`).all(...(projectId ? [projectId] : []))
      .map((row) => ({ ...toLink(row), model: modelName(row.model), spend: toSpend(row) }));
  }

  /**
   * What `costsByDay` needs for launches since `since`, read per project on the (project_id,
   * created_at) index so a page costs the window, not the whole history: the tasks created since
   * then that spent, their links, and the run tasks among them. A task is never older than the task
   * that launched it, so the window's tasks and their direct parents are all the links needed: a
   * walk that reaches an older parent ends before `since` and is left out.
   */
  launchesSince(since: number, projectId?: string): { spent: SpentTask[]; links: TaskLink[]; runs: RunTask[] } {
    const out = { spent: [] as SpentTask[], links: [] as TaskLink[], runs: [] as RunTask[] };
    if (!this.connection.has("task_spend")) return out;
    for (const project of projectId ? [projectId] : this.projects()) {
      out.spent.push(...this.connection.sql(`SELECT t.project_id, t.id, t.parent_session_id, t.created_at, t.model, ${SUMS}
        FROM tasks t JOIN task_spend s ON s.project_id = t.project_id AND s.task_id = t.id
        WHERE t.project_id = ? AND t.created_at >= ? GROUP BY t.id`).all(project, since)
        .map((row) => ({ ...toLink(row), model: modelName(row.model), spend: toSpend(row) })));
      out.links.push(...this.connection.sql(`SELECT project_id, id, parent_session_id, created_at FROM tasks WHERE project_id = ? AND created_at >= ?
        UNION SELECT p.project_id, p.id, p.parent_session_id, p.created_at FROM tasks c JOIN tasks p ON p.project_id = c.project_id AND p.id = c.parent_session_id
        WHERE c.project_id = ? AND c.created_at >= ?`).all(project, since, project, since).map(toLink));
    }
    const linked = new Set(out.links.map((l) => spendKey(l.projectId, l.id)));
    out.runs = this.runTasks(projectId).filter((r) => linked.has(spendKey(r.projectId, r.id)));
    return out;
  }

  /** Each task's own spend (its child session's requests, without its descendants'), keyed by `spendKey`. */
  own(tasks: readonly TaskRef[]): Map<string, Spend> {
    const out = new Map<string, Spend>();
    if (tasks.length === 0 || !this.connection.has("task_spend")) return out;
    const refs = JSON.stringify(tasks.map((t) => [t.projectId, t.id]));
    const rows = this.connection.sql(`SELECT s.project_id, s.task_id, ${SUMS} FROM task_spend s
      JOIN (SELECT json_extract(value, '$[0]') AS project_id, json_extract(value, '$[1]') AS id FROM json_each(?)) r
      ON s.project_id = r.project_id AND s.task_id = r.id GROUP BY s.project_id, s.task_id`).all(refs);
    for (const row of rows) out.set(spendKey(String(row.project_id), String(row.task_id)), toSpend(row));
    return out;
  }

  /**
   * A task's own model requests in the order they were made: OpenCode's message ids grow with
   * their creation time. At most `limit`, the newest kept.
   */
  requests(projectId: string, taskId: string, limit = 500): SpentRequest[] {
    if (!this.connection.has("task_spend")) return [];
    return this.connection.sql(`SELECT * FROM (SELECT message_id, input, output, reasoning, cache_read, cache_write, cost_usd, 1 AS requests
      FROM task_spend WHERE project_id = ? AND task_id = ? ORDER BY message_id DESC LIMIT ?) ORDER BY message_id`)
      .all(projectId, taskId, limit).map((row) => ({ messageId: String(row.message_id), spend: toSpend(row) }));
  }

  /** What background tasks of every project launched since `since` spent: the machine's day. */
  spentSince(since: number): Spend {
    const total = toSpend({});
    if (!this.connection.has("task_spend")) return total;
    const query = this.connection.sql(`SELECT ${SUMS} FROM tasks t JOIN task_spend s ON s.project_id = t.project_id AND s.task_id = t.id
      WHERE t.project_id = ? AND t.created_at >= ?`);
    for (const project of this.projects()) {
      const day = toSpend(query.get(project, since) ?? {}); // SUM over no rows is NULL: toSpend reads it as 0
      for (const kind of Object.keys(total.tokens) as (keyof Spend["tokens"])[]) total.tokens[kind] += day.tokens[kind];
      total.costUsd += day.costUsd;
      total.requests += day.requests;
    }
    return total;
  }

  /** The same in USD, as `dailyBudgetState` reads it against dailyBudgetUsd. */
  costSince(since: number): number {
    return this.spentSince(since).costUsd;
  }

  /**
   * Firings skipped since `since` because an automation's daily budget was reached, per automation,
   * newest first. A row counts its streak (skip_count), whole when its latest firing is since then.
   */
  budgetSkips(since: number, projectId?: string): BudgetSkip[] {
    if (!this.connection.has("automation_runs")) return [];
    const count = this.connection.hasColumn("automation_runs", "skip_count") ? "SUM(coalesce(r.skip_count, 1))" : "COUNT(*)";
    return this.connection.sql(`SELECT r.project_id, r.automation_id, a.title, ${count} AS n, MAX(coalesce(r.ended_at, r.created_at)) AS at,
      (SELECT skip_reason FROM automation_runs x WHERE x.project_id = r.project_id AND x.automation_id = r.automation_id
        AND x.status = 'skipped' AND x.skip_reason LIKE 'daily budget%' ORDER BY x.id DESC LIMIT 1) AS reason
      FROM automation_runs r LEFT JOIN automations a ON a.project_id = r.project_id AND a.id = r.automation_id
      WHERE r.status = 'skipped' AND r.skip_reason LIKE 'daily budget%' AND coalesce(r.ended_at, r.created_at) >= ? ${projectId ? "AND r.project_id = ?" : ""}
      GROUP BY r.project_id, r.automation_id ORDER BY at DESC LIMIT 50`).all(...(projectId ? [since, projectId] : [since])).map((row) => ({
      projectId: String(row.project_id), automationId: String(row.automation_id), ...(row.title == null ? {} : { title: String(row.title) }),
      count: Number(row.n), reason: String(row.reason), at: Number(row.at),
    }));
  }

  /**
   * Moves when a spend row is added (the newest row id): one index lookup. It can miss a row changed
   * in place or deleted, so a cache keyed by it should also expire.
   */
  changeMark(): number {
    if (!this.connection.has("task_spend")) return 0;
    return Number(this.connection.sql("SELECT max(rowid) AS mark FROM task_spend").get()?.mark ?? 0);
  }

  /** Every project with tasks: queries per project seek on its indexes instead of scanning every task. */
  private projects(): string[] {
    return this.connection.sql("SELECT DISTINCT project_id FROM tasks").all().map((row) => String(row.project_id));
  }

  /** Every task's parent (cleared tasks too). */
  links(projectId?: string): TaskLink[] {
    return this.connection.sql(`SELECT project_id, id, parent_session_id, created_at FROM tasks ${projectId ? "WHERE project_id = ?" : ""}`)
      .all(...(projectId ? [projectId] : [])).map(toLink);
  }

  /** The tasks automation runs launched (SQLite takes the bare columns from the MIN row: the first run that linked it). */
  runTasks(projectId?: string): RunTask[] {
    if (!this.connection.has("automation_runs")) return [];
    return this.connection.sql(`SELECT r.project_id, r.task_id, r.automation_id, a.title, MIN(r.id) AS first_run FROM automation_runs r
      LEFT JOIN automations a ON a.project_id = r.project_id AND a.id = r.automation_id
      WHERE r.task_id IS NOT NULL ${projectId ? "AND r.project_id = ?" : ""} GROUP BY r.project_id, r.task_id`)
      .all(...(projectId ? [projectId] : [])).map((row) => ({
        projectId: String(row.project_id), id: String(row.task_id), automationId: String(row.automation_id),
        ...(row.title == null ? {} : { title: String(row.title) }),
      }));
  }
}

/** How `trees` keys a task. */
export function spendKey(projectId: string, taskId: string): string {
  return `${projectId}\u0000${taskId}`;
}

function toLink(row: SqlRow): TaskLink {
  return { projectId: String(row.project_id), id: String(row.id), parentId: String(row.parent_session_id), createdAt: Number(row.created_at) };
}

function modelName(json: unknown): string {
  const ref = JSON.parse(String(json)) as { providerID?: string; modelID?: string };
  return `${ref.providerID ?? "?"}/${ref.modelID ?? "?"}`;
}

function toSpend(row: SqlRow): Spend {
  const n = (value: unknown) => Number(value ?? 0);
  return {
    tokens: { input: n(row.input), output: n(row.output), reasoning: n(row.reasoning), cacheRead: n(row.cache_read), cacheWrite: n(row.cache_write) },
    costUsd: n(row.cost_usd),
    requests: n(row.requests),
  };
}

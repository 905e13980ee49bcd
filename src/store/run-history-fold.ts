import type { SqliteDatabase, SqliteStatement, SqlRow } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

const DAY_MS = 86_400_000;
/** Rows folded in one transaction: a pass never holds the write lock for long. */
export const FOLD_BATCH_ROWS = 500;
/** Batches in one pass over all automations (100,000 rows); the rest waits for the next pass. */
export const FOLD_MAX_BATCHES = 200;
/**
 * A run that launched a task is folded only when no budget counts it any more: budgets read the
 * run rows of the current day and week, in the automation's zone (automations/automation-spending.ts).
 */
export const TASK_RUN_FOLD_AGE_MS = 8 * DAY_MS;

/** One automation's folded quiet runs of one UTC day. */
export type RunDay = {
  automationId: string;
  day: string;
  completed: number;
  skipped: number;
  missed: number;
  costUsd: number;
  requests: number;
  firstAt: number;
  lastAt: number;
};

export type FoldSettings = { keepRuns: number; now: number; retentionMs?: number };

// Quiet: it ended well or did not run, nobody was told, no channel delivery names it, and no
// event key rests on it (the key is what stops the same event firing twice).
const QUIET_OLDER_THAN = `SELECT id, status, skip_count, missed_count, created_at, ended_at, task_id, spent_before
  FROM automation_runs r WHERE project_id = ? AND automation_id = ? AND id < ?
  AND status IN ('completed', 'skipped', 'missed') AND notified IS NOT 1 AND event_key IS NULL
  AND (task_id IS NULL OR created_at < ?)
  AND NOT EXISTS (SELECT 1 FROM channel_deliveries d WHERE d.project_id = r.project_id AND d.run_id = r.id)
  ORDER BY id LIMIT ?`;
// Each task with every task below it (as automation-repository.ts's TREE_SPEND; this file is loaded without the automation layer).
const TREE_COST = `WITH RECURSIVE tree(root, id) AS (
    SELECT value, value FROM json_each(?)
    UNION SELECT tree.root, t.id FROM tree CROSS JOIN tasks t ON t.project_id = ? AND t.parent_session_id = tree.id)
  SELECT tree.root, SUM(s.cost_usd) AS cost_usd, COUNT(*) AS requests
  FROM tree CROSS JOIN task_spend s ON s.project_id = ? AND s.task_id = tree.id GROUP BY tree.root`;
const ADD_DAY = `INSERT INTO automation_run_days
  (project_id, automation_id, day, completed, skipped, missed, cost_usd, requests, first_at, last_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, automation_id, day) DO UPDATE SET
  completed = completed + excluded.completed, skipped = skipped + excluded.skipped, missed = missed + excluded.missed,
  cost_usd = cost_usd + excluded.cost_usd, requests = requests + excluded.requests,
  first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)`;

/**
 * Bounds each automation's run history: its newest `keepRuns` rows stay whole, and so does every
 * run that failed, was cancelled or was told; older quiet runs become one row per automation and
 * UTC day (counts by outcome, spend, first and last time). Each batch reads, counts and deletes
 * inside one BEGIN IMMEDIATE transaction, so two processes folding at once never count a run twice.
 */
export class RunHistoryFold {
  private statements = new StatementCache();

  constructor(private db: SqliteDatabase, readonly projectId: string) {}

  /**
   * One pass over every automation of the project; resolves to how many run rows were folded.
   * It yields to the event loop between batches: a first pass over a large history never stalls OpenCode.
   */
  async fold(settings: FoldSettings): Promise<number> {
    if (settings.retentionMs !== undefined) {
      this.sql("DELETE FROM automation_run_days WHERE project_id = ? AND last_at < ?").run(this.projectId, settings.now - settings.retentionMs);
    }
    let folded = 0;
    let batches = 0;
    for (const automationId of this.automationIds()) {
      while (batches++ < FOLD_MAX_BATCHES) {
        const count = this.db.transaction(() => this.foldBatch(automationId, settings));
        folded += count;
        if (count < FOLD_BATCH_ROWS) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return folded;
  }

  /** The automation's folded days, newest first. */
  days(automationId: string, limit = 30): RunDay[] {
    return this.sql("SELECT * FROM automation_run_days WHERE project_id = ? AND automation_id = ? ORDER BY day DESC LIMIT ?")
      .all(this.projectId, automationId, limit).map(rowToRunDay);
  }

  private automationIds(): string[] {
    return this.sql("SELECT DISTINCT automation_id FROM automation_runs WHERE project_id = ?").all(this.projectId).map((r) => String(r.automation_id));
  }

  private foldBatch(automationId: string, { keepRuns, now }: FoldSettings): number {
    const boundary = this.sql("SELECT id FROM automation_runs WHERE project_id = ? AND automation_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?")
      .get(this.projectId, automationId, keepRuns - 1);
    if (!boundary) return 0;
    const rows = this.sql(QUIET_OLDER_THAN).all(this.projectId, automationId, Number(boundary.id), now - TASK_RUN_FOLD_AGE_MS, FOLD_BATCH_ROWS);
    if (rows.length === 0) return 0;
    const spends = this.runSpends(rows);
    for (const day of groupByDay(automationId, rows, spends)) {
      this.sql(ADD_DAY).run(this.projectId, automationId, day.day, day.completed, day.skipped, day.missed, day.costUsd, day.requests, day.firstAt, day.lastAt);
    }
    this.sql("DELETE FROM automation_runs WHERE project_id = ? AND id IN (SELECT value FROM json_each(?))")
      .run(this.projectId, JSON.stringify(rows.map((r) => Number(r.id))));
    return rows.length;
  }

  /**
   * Each run's own spend: what its task tree had spent when the next run on the same task (a
   * continued session) resumed it, or now, less what it had spent when this run resumed it.
   */
  private runSpends(rows: SqlRow[]): Map<number, Cost> {
    const out = new Map<number, Cost>();
    const taskIds = [...new Set(rows.flatMap((r) => (r.task_id == null ? [] : [String(r.task_id)])))];
    if (taskIds.length === 0) return out;
    const trees = new Map<string, Cost>();
    for (const r of this.sql(TREE_COST).all(JSON.stringify(taskIds), this.projectId, this.projectId)) {
      trees.set(String(r.root), { costUsd: Number(r.cost_usd), requests: Number(r.requests) });
    }
    const chain = this.sql("SELECT id, task_id, spent_before FROM automation_runs WHERE project_id = ? AND task_id IN (SELECT value FROM json_each(?)) ORDER BY id")
      .all(this.projectId, JSON.stringify(taskIds));
    for (const row of rows) {
      if (row.task_id == null) continue;
      const next = chain.find((c) => c.task_id === row.task_id && Number(c.id) > Number(row.id));
      const end = (next && parseCost(next.spent_before)) ?? trees.get(String(row.task_id)) ?? NO_COST;
      const before = parseCost(row.spent_before) ?? NO_COST;
      out.set(Number(row.id), { costUsd: Math.max(0, end.costUsd - before.costUsd), requests: Math.max(0, end.requests - before.requests) });
    }
    return out;
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

type Cost = { costUsd: number; requests: number };
const NO_COST: Cost = { costUsd: 0, requests: 0 };

function parseCost(value: unknown): Cost | undefined {
  if (typeof value !== "string") return undefined;
  const spend = JSON.parse(value) as { costUsd?: number; requests?: number };
  return { costUsd: spend.costUsd ?? 0, requests: spend.requests ?? 0 };
}

function groupByDay(automationId: string, rows: SqlRow[], spends: Map<number, Cost>): RunDay[] {
  const days = new Map<string, RunDay>();
  for (const row of rows) {
    const createdAt = Number(row.created_at);
    const day = new Date(createdAt).toISOString().slice(0, 10);
    const d = days.get(day) ?? { automationId, day, completed: 0, skipped: 0, missed: 0, costUsd: 0, requests: 0, firstAt: createdAt, lastAt: createdAt };
    if (row.status === "completed") d.completed++;
    else if (row.status === "skipped") d.skipped += Number(row.skip_count ?? 1);
    else d.missed += Number(row.missed_count ?? 1);
    const cost = spends.get(Number(row.id)) ?? NO_COST;
    d.costUsd += cost.costUsd;
    d.requests += cost.requests;
    d.firstAt = Math.min(d.firstAt, createdAt);
    d.lastAt = Math.max(d.lastAt, Number(row.ended_at ?? createdAt));
    days.set(day, d);
  }
  return [...days.values()];
}

export function rowToRunDay(row: SqlRow): RunDay {
  return {
    automationId: String(row.automation_id), day: String(row.day), completed: Number(row.completed), skipped: Number(row.skipped),
    missed: Number(row.missed), costUsd: Number(row.cost_usd), requests: Number(row.requests), firstAt: Number(row.first_at), lastAt: Number(row.last_at),
  };
}

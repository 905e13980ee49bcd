import type { ModelRef, Task, TaskStatus, TaskWorktree } from "../core/task.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import type { Budget } from "../core/budget.ts";
import type { SqlRow, SqlValue } from "./sqlite-driver.ts";

/** The tasks table's columns, in the order `taskToParams` binds them. */
export const TASK_COLUMNS = [
  "project_id",
  "id",
  "parent_session_id",
  "batch_id",
  "description",
  "prompt",
  "agent",
  "model",
  "parent_agent",
  "parent_model",
  "status",
  "is_forked",
  "resume_count",
  "result",
  "error",
  "tool_calls",
  "last_tools",
  "last_activity_at",
  "created_at",
  "prompted_at",
  "settled_at",
  "retrieved_at",
  "cleared_at",
  "started_at",
  "notify",
  "worker",
  "budget_usd",
  "budget_tokens",
  "worktree",
] as const;

export function taskToParams(projectId: string, task: Task): SqlValue[] {
  return [
    projectId,
    task.id,
    task.parentSessionID,
    task.batchId,
    task.description,
    task.prompt,
    task.agent,
    JSON.stringify(task.model),
    task.parentAgent,
    task.parentModel ? JSON.stringify(task.parentModel) : null,
    task.status,
    task.isForked ? 1 : 0,
    task.resumeCount,
    task.result ?? null,
    task.error ?? null,
    task.progress.toolCalls,
    JSON.stringify(task.progress.lastTools),
    task.progress.lastActivityAt,
    task.createdAt,
    task.promptedAt,
    task.settledAt ?? null,
    task.retrievedAt ?? null,
    task.clearedAt ?? null,
    task.startedAt ?? null,
    task.notify === false ? 0 : 1,
    task.worker ?? null,
    task.budget?.usd ?? null,
    task.budget?.tokens ?? null,
    task.worktree ? JSON.stringify(task.worktree) : null,
  ];
}

/** The columns a TaskSummary is read from: every one but the large texts. */
export const SUMMARY_COLUMNS = TASK_COLUMNS.filter((c) => c !== "prompt" && c !== "result" && c !== "error");

/** Optional fields are left out (not set to undefined) when their column is NULL. */
export function rowToTask(row: SqlRow): Task {
  const task: Task = { ...rowToSummary(row), prompt: row.prompt as string };
  if (row.result !== null) task.result = row.result as string;
  if (row.error !== null) task.error = row.error as string;
  return task;
}

/** A row read with at least SUMMARY_COLUMNS. */
export function rowToSummary(row: SqlRow): TaskSummary {
  const task: TaskSummary = {
    id: row.id as string,
    parentSessionID: row.parent_session_id as string,
    batchId: row.batch_id as string,
    description: row.description as string,
    agent: row.agent as string,
    model: JSON.parse(row.model as string) as ModelRef,
    parentAgent: row.parent_agent as string,
    status: row.status as TaskStatus,
    isForked: row.is_forked === 1,
    resumeCount: row.resume_count as number,
    progress: {
      toolCalls: row.tool_calls as number,
      lastTools: JSON.parse(row.last_tools as string) as string[],
      lastActivityAt: row.last_activity_at as number,
    },
    createdAt: row.created_at as number,
    promptedAt: row.prompted_at as number,
  };
  if (row.parent_model !== null) task.parentModel = JSON.parse(row.parent_model as string) as ModelRef;
  if (row.settled_at !== null) task.settledAt = row.settled_at as number;
  if (row.retrieved_at !== null) task.retrievedAt = row.retrieved_at as number;
  if (row.cleared_at !== null) task.clearedAt = row.cleared_at as number;
  if (row.started_at !== null && row.started_at !== undefined) task.startedAt = row.started_at as number;
  if (row.notify === 0) task.notify = false;
  if (typeof row.worker === "string") task.worker = row.worker;
  const budget = budgetOf(row);
  if (budget) task.budget = budget;
  if (typeof row.worktree === "string") task.worktree = JSON.parse(row.worktree) as TaskWorktree;
  return task;
}

function budgetOf(row: SqlRow): Budget | undefined {
  const usd = typeof row.budget_usd === "number" ? row.budget_usd : undefined;
  const tokens = typeof row.budget_tokens === "number" ? row.budget_tokens : undefined;
  if (usd === undefined && tokens === undefined) return undefined;
  return { ...(usd !== undefined ? { usd } : {}), ...(tokens !== undefined ? { tokens } : {}) };
}

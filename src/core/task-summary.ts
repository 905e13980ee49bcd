import type { Task } from "./task.ts";

/**
 * A task without its large texts (prompt, result, error): what a listing returns, so that holding
 * or copying every task of the retention period costs a bounded amount per task. `get` has them.
 */
export type TaskSummary = Omit<Task, "prompt" | "result" | "error">;

/** The task without its large texts. Shallow: nested objects are the task's own. */
export function summaryOf(task: TaskSummary & Partial<Task>): TaskSummary {
  const { prompt: _prompt, result: _result, error: _error, ...summary } = task;
  return summary;
}

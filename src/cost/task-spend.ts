import type { MessageUsage } from "../host/host.ts";
import type { SpendSink } from "../core/spend-sink.ts";
import type { TaskStore } from "../core/task-store.ts";
import { formatSpend } from "./format-spend.ts";
import { SpendLedger } from "./spend-ledger.ts";
import { sumSpend, type Spend } from "./spend.ts";

/** Where each message's spend is kept: one row per task and message id, so a repeat (or another process) overwrites, never adds. */
export interface SpendRows {
  put(taskId: string, messageId: string, spend: Spend): void;
  /** Each task's own spend (its child session's messages), for these ids; tasks without any are absent. */
  ofTasks(taskIds: readonly string[]): Map<string, Spend>;
}

/** What the tools show: a task's spend with its descendants', as one line. */
export type SpendLines = Pick<TaskSpend, "line">;

/**
 * A task's spend, recorded from the numbers the host's message events already carry (no SDK
 * call), and read for the task with everything it launched below it.
 */
export class TaskSpend implements SpendSink {
  private readonly ledger = new SpendLedger();

  constructor(private rows: SpendRows, private tasks: Pick<TaskStore, "list">, private onError: (message: string, error: unknown) => void) {}

  record(taskId: string, messageId: string, usage: MessageUsage): void {
    try {
      const spend = this.ledger.record(taskId, messageId, usage);
      if (spend) this.rows.put(taskId, messageId, spend);
    } catch (error) {
      this.onError(`Could not record the spend of task ${taskId}`, error);
    }
  }

  forget(taskId: string): void {
    this.ledger.forget(taskId);
  }

  /** The task's spend with its descendants' (the children it launched, theirs, and so on). */
  treeSpend(taskId: string): Spend {
    const ids = [taskId, ...descendantIds(this.tasks, taskId)];
    return sumSpend(this.rows.ofTasks(ids).values());
  }

  /** `$0.081 · 15.0k tok` for the task tree; undefined before its first model request. */
  line(taskId: string): string | undefined {
    const spend = this.treeSpend(taskId);
    return spend.requests > 0 ? formatSpend(spend) : undefined;
  }
}

/** Every task below a task, cleared ones too (they spent all the same). */
export function descendantIds(tasks: Pick<TaskStore, "list">, taskId: string, seen = new Set<string>([taskId])): string[] {
  const ids: string[] = [];
  for (const child of tasks.list({ parentSessionID: taskId, includeCleared: true })) {
    if (seen.has(child.id)) continue;
    seen.add(child.id);
    ids.push(child.id, ...descendantIds(tasks, child.id, seen));
  }
  return ids;
}

import type { MessageUsage } from "../host/host.ts";
import type { SpendSink } from "../core/spend-sink.ts";
import type { TaskStore } from "../core/task-store.ts";
import type { Budget, BudgetStop } from "../core/budget.ts";
import { BudgetGuard, type BudgetRows } from "./budget-guard.ts";
import { dailyBudgetRefusal, dailyBudgetState, type DailyTotals } from "./daily-budget.ts";
import { formatSpend } from "./format-spend.ts";
import { LiveTrees } from "./live-trees.ts";
import { SpendLedger } from "./spend-ledger.ts";
import { subtractSpend, type Spend } from "./spend.ts";

export { descendantIds } from "./budget-guard.ts";

/** Where each message's spend is kept: one row per task and message id, so a repeat (or another process) overwrites, never adds. */
export interface SpendRows extends BudgetRows, DailyTotals {
  put(taskId: string, messageId: string, spend: Spend): void;
  /** Each task's own spend (its child session's messages), for these ids; tasks without any are absent. */
  ofTasks(taskIds: readonly string[]): Map<string, Spend>;
  /** SQLite's data_version: changes when another connection has written. Without it, every total is read from the rows. */
  dataVersion?(): number;
}

/** What the tools show: a task's spend with its descendants', as one line. */
export type SpendLines = Pick<TaskSpend, "line">;

/** The limits on spending: the machine's daily budget in USD (0: none) and the clock it is counted by. */
export type SpendLimits = { dailyBudgetUsd: number; now: () => number };

/**
 * A task's spend, recorded from the numbers the host's message events already carry (no SDK
 * call), read for the task with everything it launched below it, and held to the budgets.
 */
export class TaskSpend implements SpendSink {
  private readonly ledger = new SpendLedger();
  private readonly guard: BudgetGuard;
  private readonly trees = new LiveTrees();
  /** The database's data_version as last read. */
  private version: number | undefined;

  constructor(
    private rows: SpendRows,
    tasks: Pick<TaskStore, "list" | "get">,
    private onError: (message: string, error: unknown) => void,
    private limits: SpendLimits = { dailyBudgetUsd: 0, now: Date.now },
  ) {
    this.guard = new BudgetGuard(rows, tasks);
  }

  record(taskId: string, messageId: string, usage: MessageUsage): BudgetStop | undefined {
    let spend: Spend | undefined;
    try {
      const before = this.ledger.latest(taskId, messageId);
      spend = this.ledger.record(taskId, messageId, usage);
      if (spend) this.trees.add(taskId, before ? subtractSpend(spend, before) : spend);
    } catch (error) {
      this.onError(`Could not record the spend of task ${taskId}`, error);
    }
    if (!spend) return undefined;
    // Checked before the write: the guard's seeds come from the store and must not hold it yet.
    let stop: BudgetStop | undefined;
    try {
      stop = this.guard.observe(taskId, messageId, spend);
    } catch (error) {
      this.onError(`Could not check the budget of task ${taskId}`, error);
    }
    try {
      this.rows.put(taskId, messageId, spend);
    } catch (error) {
      this.onError(`Could not record the spend of task ${taskId}`, error);
    }
    return stop;
  }

  /**
   * A task this process launched, before its first prompt: its budgets are known without a query,
   * and its tree's spend is kept in memory for as long as no other connection writes.
   */
  launched(task: { id: string; parentSessionID: string; budget?: Budget }): void {
    try {
      this.guard.launched(task.id, task.parentSessionID, task.budget);
      if (this.rows.dataVersion) this.trees.launched(task.id, task.parentSessionID, (this.version ??= this.rows.dataVersion()));
    } catch (error) {
      this.onError(`Could not follow the spend of task ${task.id}`, error);
    }
  }

  forget(taskId: string): void {
    this.ledger.forget(taskId);
    this.guard.forget(taskId);
    this.trees.forget(taskId);
  }

  budgetChanged(): void {
    this.guard.reset();
  }

  passed(taskId: string, budget: Budget): string | undefined {
    return this.guard.passed(taskId, budget);
  }

  left(taskId: string): Budget | undefined {
    return this.guard.left(taskId);
  }

  refusal(): string | undefined {
    if (this.limits.dailyBudgetUsd <= 0) return undefined;
    return dailyBudgetRefusal(dailyBudgetState(this.rows, this.limits, this.limits.now()));
  }

  /** The task's spend with its descendants' (the children it launched, theirs, and so on). */
  treeSpend(taskId: string): Spend {
    return this.guard.treeSpend(taskId);
  }

  /** `$0.081 · 15.0k tok` for the task tree; undefined before its first model request. */
  line(taskId: string): string | undefined {
    const spend = this.liveTreeSpend(taskId) ?? this.treeSpend(taskId);
    return spend.requests > 0 ? formatSpend(spend) : undefined;
  }

  /** A settle's total without a query: the tree's spend as recorded here, while no other connection has written. */
  private liveTreeSpend(taskId: string): Spend | undefined {
    if (!this.rows.dataVersion) return undefined;
    this.version = this.rows.dataVersion();
    return this.trees.total(taskId, this.version);
  }
}

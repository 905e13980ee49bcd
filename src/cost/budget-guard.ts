import type { Budget, BudgetStop } from "../core/budget.ts";
import type { TaskStore } from "../core/task-store.ts";
import { budgetExceededText, passes } from "./budget-text.ts";
import { addSpend, countedTokens, NO_SPEND, subtractSpend, sumSpend, type Spend } from "./spend.ts";

/** What the guard reads from the store: a task's own requests, and tasks' own totals (for a tree). */
export type BudgetRows = {
  messagesOf(taskId: string): Map<string, Spend>;
  ofTasks(taskIds: readonly string[]): Map<string, Spend>;
  /** The task's budget and its launchers', nearest first, in one read (without it: the tasks are read one by one). */
  budgetsAbove?(taskId: string): Owner[];
};

type Owner = { id: string; budget: Budget };

const MAX_DEPTH = 64;

/**
 * Checks each new model request against the budgets of its task and of the task's ancestors
 * (a budget counts the task with all its descendants). Cheap per request: running totals in
 * memory, each seeded once from the store; a task with no budget above it costs a map lookup.
 *
 * Called before a message's spend is written, so a seed (read from the store) never holds the
 * numbers it is then given. The totals are this process's view: the process that runs a tree's
 * sessions hears all of their requests.
 */
export class BudgetGuard {
  /** Each watched task's own requests, by message id, as the store has them. */
  private messages = new Map<string, Map<string, Spend>>();
  /** Each budgeted task's tree total. */
  private totals = new Map<string, Spend>();
  /** The task itself or its ancestors that have a budget, nearest first (a launcher that is no task: none). */
  private owners = new Map<string, Owner[]>();
  /** Budgeted tasks already stopped: the parent is told once. */
  private stopped = new Set<string>();

  constructor(private rows: BudgetRows, private tasks: Pick<TaskStore, "get" | "list">) {}

  /** The stop to make when this request takes a tree past its budget (the outermost such tree), once per budget. */
  observe(taskId: string, messageId: string, spend: Spend): BudgetStop | undefined {
    const owners = this.ownersOf(taskId);
    if (owners.length === 0) return undefined;
    const before = owners.map((owner) => this.totalOf(owner.id));
    const messages = this.messagesOf(taskId);
    const added = subtractSpend(spend, messages.get(messageId) ?? NO_SPEND);
    messages.set(messageId, spend);
    let stop: BudgetStop | undefined;
    owners.forEach((owner, i) => {
      const total = addSpend(before[i], added);
      this.totals.set(owner.id, total);
      if (this.stopped.has(owner.id) || !passes(total, owner.budget)) return;
      this.stopped.add(owner.id);
      stop = { taskId: owner.id, error: budgetExceededText(total, owner.budget) };
    });
    return stop;
  }

  /**
   * A task launched by this process: its budgets are its own and its launcher's, known without a
   * query (its launcher's are read once per launcher, e.g. once for a whole fan-out).
   */
  launched(taskId: string, parentId: string, budget: Budget | undefined): void {
    const above = this.ownersOf(parentId);
    this.owners.set(taskId, budget ? [{ id: taskId, budget }, ...above] : above);
  }

  /** The budget_exceeded text when the tree's spend (from the store) already passes `budget`. */
  passed(taskId: string, budget: Budget): string | undefined {
    const total = this.treeSpend(taskId);
    return passes(total, budget) ? budgetExceededText(total, budget) : undefined;
  }

  /**
   * What the task may still spend: for each budget at or above it, that budget less its tree's
   * spend (from the store), the least of them per unit. Undefined: no budget limits it.
   */
  left(taskId: string): Budget | undefined {
    let left: Budget | undefined;
    for (const owner of this.ownersOf(taskId)) {
      const spent = this.treeSpend(owner.id);
      const mine: Budget = {};
      if (owner.budget.usd !== undefined) mine.usd = owner.budget.usd - spent.costUsd;
      if (owner.budget.tokens !== undefined) mine.tokens = owner.budget.tokens - countedTokens(spent);
      left = left ? leastOf(left, mine) : mine;
    }
    return left;
  }

  /** A settled task: its entries go; a later request of its tree seeds them again from the store. */
  forget(taskId: string): void {
    this.messages.delete(taskId);
    this.totals.delete(taskId);
    this.owners.delete(taskId);
  }

  /** A budget changed (a resume with a new one): everything is seeded again. */
  reset(): void {
    this.messages.clear();
    this.totals.clear();
    this.owners.clear();
    this.stopped.clear();
  }

  /** The task tree's spend, from the store. */
  treeSpend(taskId: string): Spend {
    return sumSpend(this.rows.ofTasks([taskId, ...descendantIds(this.tasks, taskId)]).values());
  }

  private ownersOf(taskId: string): Owner[] {
    let owners = this.owners.get(taskId);
    if (owners) return owners;
    owners = this.rows.budgetsAbove?.(taskId);
    if (owners) {
      this.owners.set(taskId, owners);
      return owners;
    }
    owners = [];
    let task = this.tasks.get(taskId);
    for (let depth = 0; task && depth < MAX_DEPTH; depth++, task = this.tasks.get(task.parentSessionID)) {
      if (task.budget) owners.push({ id: task.id, budget: task.budget });
    }
    this.owners.set(taskId, owners);
    return owners;
  }

  private totalOf(ownerId: string): Spend {
    return this.totals.get(ownerId) ?? this.treeSpend(ownerId);
  }

  private messagesOf(taskId: string): Map<string, Spend> {
    let messages = this.messages.get(taskId);
    if (!messages) this.messages.set(taskId, (messages = this.rows.messagesOf(taskId)));
    return messages;
  }
}

/** The tighter of two limits, per unit (a unit one of them leaves out is limited by the other alone). */
export function leastOf(a: Budget, b: Budget): Budget {
  const least = (x?: number, y?: number) => (x === undefined ? y : y === undefined ? x : Math.min(x, y));
  const usd = least(a.usd, b.usd);
  const tokens = least(a.tokens, b.tokens);
  return { ...(usd !== undefined ? { usd } : {}), ...(tokens !== undefined ? { tokens } : {}) };
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

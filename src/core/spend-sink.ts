import type { MessageUsage } from "../host/host.ts";
import type { Budget, BudgetStop } from "./budget.ts";

/**
 * Where the core reports what its children's model requests cost (src/cost implements it): each
 * assistant message's numbers as events and polls bring them, and the line shown when a task
 * settles. It holds the budgets too: it says when a request takes a task tree past one.
 */
export type SpendSink = {
  /**
   * Idempotent per message id: the latest numbers of a message count, once. Never throws. Returns
   * the stop to make when this request took a task tree (its own or an ancestor's) past its budget.
   */
  record(taskId: string, messageId: string, usage: MessageUsage): BudgetStop | undefined;
  /** The task's spend with its descendants', as shown (`$0.081 · 15.0k tok`); undefined before any request. */
  line(taskId: string): string | undefined;
  /** A task launched by this process, before its child's first prompt. Never throws. */
  launched?(task: { id: string; parentSessionID: string; budget?: Budget }): void;
  forget(taskId: string): void;
  /** A task's budget changed (a resume gave a new one): running totals are read again. */
  budgetChanged?(taskId: string): void;
  /** The budget_exceeded text when the task tree has already spent more than `budget`. */
  passed?(taskId: string, budget: Budget): string | undefined;
  /** What the task tree may still spend under its own budget and those above it (0 or less: none); undefined: no budget. */
  left?(taskId: string): Budget | undefined;
  /** Why no new background work may start now (dailyBudgetUsd reached, with the figure); undefined: it may. */
  refusal?(): string | undefined;
};

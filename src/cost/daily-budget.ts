import { formatUsd } from "./format-spend.ts";

/** What the daily budget is read from: every project's spend in the one database (store.spend). */
export type DailyTotals = { costSince(sinceMs: number): number };

/** The machine's background work today against `dailyBudgetUsd` (0: none, never reached). */
export type DailyBudgetState = { limitUsd: number | undefined; spentUsd: number; reached: boolean; since: number };

/**
 * Today's spend of all background work of the machine (every project, every OpenCode process on
 * the database; a task counts on the local day it was launched) against the option. One query.
 */
export function dailyBudgetState(totals: DailyTotals, options: { dailyBudgetUsd: number }, now: number): DailyBudgetState {
  const since = startOfLocalDay(now);
  const limitUsd = options.dailyBudgetUsd > 0 ? options.dailyBudgetUsd : undefined;
  if (limitUsd === undefined) return { limitUsd, spentUsd: 0, reached: false, since };
  const spentUsd = totals.costSince(since);
  return { limitUsd, spentUsd, reached: spentUsd >= limitUsd, since };
}

/** Why no new background work may start now, naming the figure and the option; undefined while under the budget. */
export function dailyBudgetRefusal(state: DailyBudgetState): string | undefined {
  if (!state.reached || state.limitUsd === undefined) return undefined;
  return `The daily budget of background work is reached: ${formatUsd(state.spentUsd)} of ${formatUsd(state.limitUsd)} spent today (option dailyBudgetUsd, all projects). ` +
    "New background tasks start again tomorrow or when the user raises dailyBudgetUsd; do the work here instead.";
}

export function startOfLocalDay(now: number): number {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}

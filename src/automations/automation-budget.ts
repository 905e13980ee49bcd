import type { Budget } from "../core/budget.ts";
import { formatTokens, formatUsd } from "../cost/format-spend.ts";
import { countedTokens, type Spend } from "../cost/spend.ts";

/**
 * An automation's spending limits: per run (its task tree, stopped at the limit as a task with a
 * budget is) and per day (its runs' spend since midnight in its zone; past it, firings are skipped
 * until the next day). Tokens count input + output + reasoning. At least one is set, each > 0.
 */
export type AutomationBudget = { usdPerRun?: number; usdPerDay?: number; tokensPerRun?: number; tokensPerDay?: number };

/** The tool's keys and the fields they set. */
const KEYS = { usd_per_run: "usdPerRun", usd_per_day: "usdPerDay", tokens_per_run: "tokensPerRun", tokens_per_day: "tokensPerDay" } as const;
const EXAMPLE = `e.g. { "usd_per_run": 0.5, "usd_per_day": 2 }`;

/** The skip reason of a firing past a daily budget starts so (the dashboard finds them by it). */
export const DAILY_BUDGET_REACHED = "daily budget reached";

/**
 * `budget` as the tool gives it: the budget, undefined for `{}` (none), or `{ problem }` saying
 * what to write instead.
 */
export function parseAutomationBudget(value: unknown): { budget: AutomationBudget | undefined; problem?: undefined } | { problem: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: `budget must be an object, ${EXAMPLE}; got ${JSON.stringify(value)}.` };
  const budget: AutomationBudget = {};
  for (const [key, n] of Object.entries(value)) {
    if (!(key in KEYS)) return { problem: `budget takes ${Object.keys(KEYS).join(", ")}, not "${key}" (${EXAMPLE}).` };
    if (n === undefined || n === null) continue;
    if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) return { problem: `budget.${key} must be a number above 0, got ${JSON.stringify(n)}.` };
    if (key.startsWith("tokens") && !Number.isInteger(n)) return { problem: `budget.${key} must be a whole number of tokens, got ${n}.` };
    budget[KEYS[key as keyof typeof KEYS]] = n;
  }
  return { budget: Object.keys(budget).length > 0 ? budget : undefined };
}

/** The budget each run's task is launched with; undefined without a per-run limit. */
export function runBudget(b: AutomationBudget | undefined): Budget | undefined {
  if (b?.usdPerRun === undefined && b?.tokensPerRun === undefined) return undefined;
  return { ...(b.usdPerRun !== undefined ? { usd: b.usdPerRun } : {}), ...(b.tokensPerRun !== undefined ? { tokens: b.tokensPerRun } : {}) };
}

/**
 * `daily budget reached ($2.03 of $2.00)` or `daily budget reached (2.1M of 2.0M tokens)` when
 * today's spend passes a daily limit (reaching it exactly is still within); undefined otherwise.
 */
export function dailyBudgetReason(b: AutomationBudget | undefined, today: Spend): string | undefined {
  if (b?.usdPerDay !== undefined && today.costUsd > b.usdPerDay) return `${DAILY_BUDGET_REACHED} (${formatUsd(today.costUsd)} of ${formatUsd(b.usdPerDay)})`;
  const tokens = countedTokens(today);
  if (b?.tokensPerDay !== undefined && tokens > b.tokensPerDay) return `${DAILY_BUDGET_REACHED} (${formatTokens(tokens)} of ${formatTokens(b.tokensPerDay)} tokens)`;
  return undefined;
}

export function hasDailyLimit(b: AutomationBudget | undefined): boolean {
  return b?.usdPerDay !== undefined || b?.tokensPerDay !== undefined;
}

/** `$0.50 per run, $2.00 per day`: a budget as task_read shows it. */
export function budgetText(b: AutomationBudget): string {
  const usd = (n: number | undefined, per: string) => (n === undefined ? [] : [`${formatUsd(n)} per ${per}`]);
  const tokens = (n: number | undefined, per: string) => (n === undefined ? [] : [`${formatTokens(n)} tokens per ${per}`]);
  return [...usd(b.usdPerRun, "run"), ...tokens(b.tokensPerRun, "run"), ...usd(b.usdPerDay, "day"), ...tokens(b.tokensPerDay, "day")].join(", ");
}

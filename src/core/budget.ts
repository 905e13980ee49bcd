/**
 * A spending limit for a task tree (the task with its descendants): USD, and/or tokens counted as
 * input + output + reasoning (cache reads and writes are not counted). At least one is set, each > 0.
 */
export type Budget = { usd?: number; tokens?: number };

/** A task stopped at its budget: its error starts with this (`budget_exceeded: spent $0.52 of $0.50 …`). */
export const BUDGET_EXCEEDED = "budget_exceeded";

/** What the core does when a recorded spend passes a budget: settle `taskId` as error with `error`. */
export type BudgetStop = { taskId: string; error: string };

export function isBudgetStop(error: string | undefined): boolean {
  return error?.startsWith(`${BUDGET_EXCEEDED}:`) ?? false;
}

/**
 * A budget as given (a tool argument, an option), checked: `{ budget }`, or `{ problem }` saying
 * what is wrong and what to write instead. `at` names it in the message (e.g. "budget").
 */
export function parseBudget(value: unknown, at: string): { budget: Budget; problem?: undefined } | { budget?: undefined; problem: string } {
  const example = `e.g. { "usd": 0.5 } or { "tokens": 200000 }`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: `${at} must be an object with usd and/or tokens, ${example}, got ${JSON.stringify(value)}` };
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => k !== "usd" && k !== "tokens");
  if (unknown.length > 0) return { problem: `${at} takes only usd and tokens, not ${unknown.join(", ")} (${example})` };
  if (fields.usd === undefined && fields.tokens === undefined) return { problem: `${at} must set usd and/or tokens, ${example}` };
  const budget: Budget = {};
  for (const key of ["usd", "tokens"] as const) {
    const n = fields[key];
    if (n === undefined) continue;
    if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) return { problem: `${at}.${key} must be a number above 0, got ${typeof n === "number" ? String(n) : JSON.stringify(n)}` };
    if (key === "tokens" && !Number.isInteger(n)) return { problem: `${at}.tokens must be a whole number of tokens, got ${n}` };
    budget[key] = n;
  }
  return { budget };
}

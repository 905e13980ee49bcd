import { BUDGET_EXCEEDED, type Budget } from "../core/budget.ts";
import { formatTokens, formatUsd } from "./format-spend.ts";
import { countedTokens, type Spend } from "./spend.ts";

/** Past the budget: more than it allows (reaching it exactly is still within). */
export function passes(spend: Spend, budget: Budget): boolean {
  return (budget.usd !== undefined && spend.costUsd > budget.usd) || (budget.tokens !== undefined && countedTokens(spend) > budget.tokens);
}

/**
 * `budget_exceeded: spent $0.52 of $0.50 (112.0k tokens, 9 requests)`, or by tokens
 * `budget_exceeded: spent 3.0k of 2.5k tokens ($0.013, 3 requests)`: the limit that was passed first.
 */
export function budgetExceededText(spend: Spend, budget: Budget): string {
  const requests = `${spend.requests} request${spend.requests === 1 ? "" : "s"}`;
  if (budget.usd !== undefined && spend.costUsd > budget.usd) {
    return `${BUDGET_EXCEEDED}: spent ${formatUsd(spend.costUsd)} of ${formatUsd(budget.usd)} (${formatTokens(countedTokens(spend))} tokens, ${requests})`;
  }
  const cost = spend.costUsd > 0 ? `${formatUsd(spend.costUsd)}, ` : "";
  return `${BUDGET_EXCEEDED}: spent ${formatTokens(countedTokens(spend))} of ${formatTokens(budget.tokens ?? 0)} tokens (${cost}${requests})`;
}

/** A budget as a person reads it: `$0.50`, `200.0k tokens`, or both. */
export function formatBudget(budget: Budget): string {
  return [budget.usd !== undefined ? formatUsd(budget.usd) : "", budget.tokens !== undefined ? `${formatTokens(budget.tokens)} tokens` : ""]
    .filter(Boolean).join(" or ");
}

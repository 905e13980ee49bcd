import type { TaskManager, TaskScope } from "../core/task-manager.ts";
import type { Task } from "../core/task.ts";
import { isBudgetStop, type Budget } from "../core/budget.ts";
import { errorMessage, TaskError } from "../core/errors.ts";
import { formatBudget } from "../cost/budget-text.ts";
import { leastOf } from "../cost/budget-guard.ts";
import type { CallContext } from "./tool-kit.ts";

export const BUDGET_PERMISSION = "background_budget";

/** What a launch or resume may spend, and the line its answer adds when that is not what was asked. */
export type AllowedBudget = { budget?: Budget; note?: string };

type Request = {
  /** The budget the call gives; undefined: the task's own (a resume) or the taskBudget option's (a launch). */
  requested?: Budget;
  /** A resume: the task resumed. */
  resumed?: Task;
  /** A launch: its description. */
  description: string;
};

/**
 * A child spends at most what its own task has left, whatever it asks for. More than the
 * taskBudget option, or more for a task stopped at its budget, is the user's decision: asked
 * through `background_budget` before anything is launched or stored.
 */
export async function allowedBudget(manager: TaskManager, scope: TaskScope, call: CallContext, request: Request): Promise<AllowedBudget> {
  const { requested, resumed } = request;
  const left = scope.owner ? manager.budgetLeft(scope.owner) : undefined;
  if (left && ((left.usd ?? 1) <= 0 || (left.tokens ?? 1) <= 0)) {
    throw new TaskError(`This session's task ${scope.owner} has no budget left; nothing was ${resumed ? "resumed" : "launched"}. The user decides whether it may spend more.`);
  }
  // A resume without a budget keeps the task's own, under the budgets above it.
  if (resumed && !requested) return {};
  const wanted = requested ?? manager.defaultBudget();
  const budget = left ? leastOf(wanted ?? left, roundedDown(left)) : wanted;
  const cut = requested && budget && !sameBudget(requested, budget);
  const note = cut ? `The budget asked for (${formatBudget(requested)}) was cut to ${formatBudget(budget)}: what task ${scope.owner} has left.` : undefined;
  const option = manager.defaultBudget();
  if (requested && budget && needsUser(budget, option, resumed)) await askUser(call, budget, resumed ? resumed.budget : option, request);
  return { budget, note };
}

/** Above the taskBudget option (no shared unit counts as above), or more for a task stopped at its budget. */
function needsUser(budget: Budget, option: Budget | undefined, resumed: Task | undefined): boolean {
  if (resumed?.status === "error" && isBudgetStop(resumed.error)) return true;
  return option !== undefined && isAbove(budget, option);
}

function isAbove(budget: Budget, limit: Budget): boolean {
  const units = (["usd", "tokens"] as const).filter((k) => budget[k] !== undefined && limit[k] !== undefined);
  return units.length === 0 || units.some((k) => budget[k]! > limit[k]!);
}

/** `old`: the resumed task's budget, or for a launch the taskBudget option it goes above. */
async function askUser(call: CallContext, budget: Budget, old: Budget | undefined, { resumed, description }: Request): Promise<void> {
  const what = resumed ? `task ${resumed.id} "${resumed.description}"` : `new task "${description}"`;
  const was = old ? formatBudget(old) : "none";
  const title = `Budget ${formatBudget(budget)} for ${what} (${resumed ? `was ${was}` : `taskBudget option: ${was}`})`;
  const refused = `The user declined the budget ${formatBudget(budget)} for ${what}; nothing was ${resumed ? "resumed" : "launched"}.`;
  if (!call.ask) return; // as every tool here: OpenCode always passes one; a caller without it (tests driving tools) is the user
  // No undefined values: OpenCode's GET /permission then answers 400 for every pending prompt.
  const metadata = { title, ...(resumed ? { task: resumed.id } : {}), description: resumed?.description ?? description, ...(old ? { oldBudget: old } : {}), newBudget: budget };
  try {
    await call.ask({ permission: BUDGET_PERMISSION, patterns: [formatBudget(budget)], always: [formatBudget(budget)], metadata });
  } catch (error) {
    throw new TaskError(`${refused} (${errorMessage(error)})`);
  }
}

/** Cents and whole tokens: a cut budget must not read as more than is left. */
function roundedDown(left: Budget): Budget {
  return {
    ...(left.usd !== undefined ? { usd: left.usd >= 0.01 ? Math.floor(left.usd * 100) / 100 : left.usd } : {}),
    ...(left.tokens !== undefined ? { tokens: Math.floor(left.tokens) } : {}),
  };
}

function sameBudget(a: Budget, b: Budget): boolean {
  return a.usd === b.usd && a.tokens === b.tokens;
}

import { formatUsd } from "../cost/format-spend.ts";
import { NO_SPEND, subtractSpend, sumSpend, type Spend } from "../cost/spend.ts";
import { noticeLine } from "../core/notice-line.ts";
import type { Automation, Run } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import { dailyBudgetReason, DAILY_BUDGET_REACHED, hasDailyLimit } from "./automation-budget.ts";
import { automationZone, dayKey, startOfDayIn, startOfNextDayIn, startOfWeekIn } from "./zoned-day.ts";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * What an automation's runs spent (read from the database, so several OpenCode processes on it
 * count one spend), and whether its firings are skipped for a daily budget: its own, in its zone,
 * or the machine's (option dailyBudgetUsd). Its owner is told once a day.
 */
export class AutomationSpending {
  constructor(private ctx: AutomationContext) {}

  /** The zone its days are counted in. */
  zone(a: Automation): string {
    return automationZone(this.ctx.store.triggers(a.id));
  }

  /** What its runs launched since `since` spent: each run's task with its descendants, less what a continued task had spent before. */
  spentSince(a: Automation, since: number): Spend {
    this.flush();
    const tasks = this.ctx.store.runTasksSince(a.id, since);
    const trees = this.ctx.store.treeSpends(tasks.map((t) => t.taskId));
    return sumSpend(tasks.map((t) => subtractSpend(trees.get(t.taskId) ?? NO_SPEND, t.spentBefore ?? NO_SPEND)));
  }

  today(a: Automation): Spend {
    return this.spentSince(a, startOfDayIn(this.ctx.clock.now(), this.zone(a)));
  }

  week(a: Automation): Spend {
    return this.spentSince(a, startOfWeekIn(this.ctx.clock.now(), this.zone(a)));
  }

  /** The newest run that launched a task, and what it spent. */
  lastRun(a: Automation): { run: Run; spend: Spend } | undefined {
    const run = this.ctx.store.runs(a.id, 50).find((r) => r.taskId !== undefined);
    if (!run) return undefined;
    this.flush();
    const tree = this.ctx.store.treeSpends([run.taskId!]).get(run.taskId!) ?? NO_SPEND;
    return { run, spend: subtractSpend(tree, run.spentBefore ?? NO_SPEND) };
  }

  /** A task tree's spend now (a continued run records it before it resumes the task). */
  treeSpend(taskId: string): Spend {
    this.flush();
    return this.ctx.store.treeSpends([taskId]).get(taskId) ?? NO_SPEND;
  }

  /**
   * Why a firing of `a` is skipped now: `daily budget reached ($2.03 of $2.00)`, or the machine's
   * daily budget naming its option. Undefined when it may run; a run of steps only costs nothing
   * and is never skipped for a budget.
   */
  skipReason(a: Automation): string | undefined {
    if (a.prompt === "") return undefined;
    const now = this.ctx.clock.now();
    if (hasDailyLimit(a.budget)) {
      const reason = dailyBudgetReason(a.budget, this.spentSince(a, startOfDayIn(now, this.zone(a))));
      if (reason) return reason;
    }
    const machine = this.ctx.spend?.machineToday(now);
    if (!machine?.reached || machine.limitUsd === undefined) return undefined;
    return `${DAILY_BUDGET_REACHED} (${formatUsd(machine.spentUsd)} of ${formatUsd(machine.limitUsd)} for all background work today, option dailyBudgetUsd)`;
  }

  /**
   * Inside the transaction that records the skip: the owner (the session runs report to) hears it
   * once a day, whichever process skips first (a claim on the automation's row).
   */
  tellOnce(a: Automation, reason: string): void {
    const now = this.ctx.clock.now();
    const zone = this.zone(a);
    const day = dayKey(now, zone);
    if (!this.ctx.store.claimBudgetNotice(a.id, day) || a.reportToGoneAt !== undefined) return;
    const machine = reason.includes("option dailyBudgetUsd");
    const raise = machine
      ? "The user can raise the option dailyBudgetUsd (it covers all background work of this machine)."
      : `To run it sooner, raise its daily budget: task_update { id: "${a.id}", budget: { ... } }.`;
    this.ctx.manager.enqueueNotification({
      id: `budget:${a.id}:${day}`, parentSessionID: a.reportTo, taskId: a.continueTaskId ?? "", wake: false,
      agent: a.reportAgent, model: a.reportModel,
      text: [
        `<automation-budget automation="${a.id}">`,
        `Automation "${a.title}" (${a.id}): ${reason}. Its firings are skipped (and recorded) until ${iso(startOfNextDayIn(now, zone))} (midnight, ${zone}); then it runs again by itself. ${raise}`,
        "</automation-budget>",
      ].join("\n"),
      visible: noticeLine("⏸", `automation "${a.title}"`, `${reason}; skipped until tomorrow`),
    });
  }

  /** This process's spend rows still kept (write-behind) go to the database first, so the reads hold them. */
  private flush(): void {
    this.ctx.flushSpend();
  }
}

import { errorMessage } from "../core/errors.ts";
import type { Task, TaskWorktree } from "../core/task.ts";
import { ACTIVE_RUN, runName, type Automation, type FiredBy, type Run } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import type { NewRun } from "../store/automation-repository.ts";
import type { RunRecorder } from "./run-recorder.ts";
import { runContextLine } from "./automation-text.ts";
import { runDescription, StepPhase, type RunWorktree } from "./step-phase.ts";
import { workspaceBlock } from "./workspace-block.ts";
import type { AutomationSpending } from "./automation-spending.ts";
import { runBudget } from "./automation-budget.ts";
import type { Budget } from "../core/budget.ts";
import { countedTokens, type Spend } from "../cost/spend.ts";

/** What an event trigger's source reported, ready to store: capped and masked. */
export type FiringEvent = { summary: string; data?: string; key?: string };

export type Firing = { triggerId?: string; firedBy: FiredBy; plannedAt?: number; event?: FiringEvent };

/**
 * Turns firings into runs: decides (inside a transaction) whether a firing starts, waits or is
 * skipped, then launches started runs through the core's public API.
 */
export class RunStarter {
  /** Runs the steps of automations that have them, before (or instead of) their task. */
  readonly steps: StepPhase;

  constructor(private ctx: AutomationContext, private recorder: RunRecorder, private spending: AutomationSpending) {
    this.steps = new StepPhase(ctx, recorder, (a, run, text, isolated) => this.launchAfterSteps(a, run, text, isolated));
  }

  /**
   * Inside a transaction. Records the firing: a run that starts (numbered, counted against
   * max_runs), the one waiting run (overlap: queue; newest wins) or a skip (overlap: skip, or a
   * daily budget reached: the owner is told once that day), consecutive skips for one reason
   * counted on one row (RunRows.skip). Undefined
   * when the (trigger, planned time) row exists already: another process fired this occurrence;
   * or when the event's key has a row of this trigger already: the event was fired before.
   */
  admit(a: Automation, firing: Firing): Run | undefined {
    const { store, clock, runs } = this.ctx;
    const now = clock.now();
    const { event, ...when } = firing;
    if (event?.key && when.triggerId && store.firedEvent(when.triggerId, event.key)) return undefined;
    const base: NewRun = { automationId: a.id, ...when, status: "starting", createdAt: now, eventSummary: event?.summary, eventData: event?.data, eventKey: event?.key };
    const active = this.recorder.endStrandedRuns(a.id);
    const busy = active.length > 0;
    if (busy && a.overlap === "skip") return runs.skip({ ...base, skipReason: "overlap" });
    if (busy) return this.queue(a, base, active[0]!);
    const overBudget = this.spending.skipReason(a);
    if (overBudget) {
      const skipped = runs.skip({ ...base, skipReason: overBudget });
      if (skipped) this.spending.tellOnce(a, overBudget);
      return skipped;
    }
    const run = runs.insert({ ...base, runNo: a.runCount + 1, startedAt: now });
    if (run) store.saveAutomation(counted(a, now));
    if (run) this.hold(run.id);
    return run;
  }

  /**
   * A firing while a run is going (overlap: queue): one row waits, the newest firing. A waiting
   * row newer than the active run takes the newest firing in place and counts the ones it
   * replaced (eventFolded), so a chatty source or a fast schedule never piles up rows.
   */
  private queue(a: Automation, base: NewRun, active: Run): Run | undefined {
    const { store, runs } = this.ctx;
    const latest = store.runs(a.id, 1)[0];
    // A keyed event keeps its own row: its key is what stops it firing twice.
    if (!latest || latest.status !== "waiting" || latest.id < active.id || base.eventKey !== undefined || latest.eventKey !== undefined) {
      runs.skipWaiting(a.id, "overlap", "replaced by a newer firing (overlap: queue keeps one)");
      return runs.insert({ ...base, status: "waiting" });
    }
    const newest = {
      triggerId: base.triggerId, firedBy: base.firedBy, plannedAt: base.plannedAt, createdAt: base.createdAt,
      eventSummary: base.eventSummary, eventData: base.eventData, eventFolded: (latest.eventFolded ?? 0) + 1,
    };
    runs.note(latest.id, newest);
    return { ...latest, ...newest } as Run;
  }

  /** Starts the automation's waiting run if nothing of it runs any more (one process wins). */
  startWaiting(automationId: string): void {
    const { store, clock } = this.ctx;
    const started = store.transaction(() => {
      const a = store.automation(automationId);
      const waiting = store.runsWithStatus(automationId, ["waiting"]).at(-1);
      if (!a || !waiting || store.runsWithStatus(automationId, ACTIVE_RUN).length > 0) return undefined;
      if (!a.enabled || a.doneAt !== undefined) {
        this.ctx.runs.skipWaiting(a.id, a.doneAt !== undefined ? "done" : "paused");
        return undefined;
      }
      const overBudget = this.spending.skipReason(a);
      if (overBudget) {
        this.ctx.runs.skipWaiting(a.id, overBudget);
        this.spending.tellOnce(a, overBudget);
        return undefined;
      }
      const now = clock.now();
      this.ctx.runs.move(waiting.id, "starting", { runNo: a.runCount + 1, startedAt: now });
      this.hold(waiting.id);
      store.saveAutomation(counted(a, now));
      return store.run(waiting.id);
    });
    if (started) void this.launch(started);
  }

  /** This process holds the run from `starting` until it ends (renewed by the claim sweep): a crash before its task is saved strands it no longer than a lease. */
  private hold(runId: number): void {
    this.ctx.store.runClaims.claim(runId, this.ctx.holder, this.ctx.clock.now(), this.ctx.runLeaseMs);
  }

  /**
   * Launches a run in status `starting`: its task, or first its steps (then this returns while
   * they run). Never throws: a failed launch ends the run as an error.
   */
  async launch(run: Run): Promise<{ run: Run; task?: Task }> {
    const { store } = this.ctx;
    const a = store.automation(run.automationId);
    if (!a) return { run };
    try {
      await this.checkReportTo(a);
      if (a.steps?.length) this.steps.begin(a, run);
      else return { run: store.run(run.id) ?? run, task: await this.startRunTask(a, run) };
    } catch (error) {
      this.failLaunch(run, error);
    }
    return { run: store.run(run.id) ?? run };
  }

  /** `isolated`: the worktree the steps ran in; the task works there, or a failed launch settles it (the run names what it left). */
  private async launchAfterSteps(a: Automation, run: Run, stepsText: string, isolated?: RunWorktree): Promise<Task | undefined> {
    try {
      return await this.startRunTask(a, run, stepsText, isolated?.worktree);
    } catch (error) {
      // A task saved before the refusal holds the worktree now: its settle ends the run.
      const branch = this.ctx.store.run(run.id)?.taskId === undefined ? await isolated?.settle() : undefined;
      this.failLaunch(run, error, branch);
      return undefined;
    }
  }

  /** Starts the run's background task and records it on the run; throws when the host refuses. */
  private async startRunTask(a: Automation, run: Run, stepsText?: string, worktree?: TaskWorktree): Promise<Task | undefined> {
    const { store, manager } = this.ctx;
    const { task, note } = await this.startTask(a, run, stepsText, worktree);
    store.transaction(() => {
      // Still starting: its task began (a task that settled at once has ended the run already).
      if (store.run(run.id)?.status === "starting") this.ctx.runs.move(run.id, "running");
      const latest = store.automation(a.id);
      if (latest && a.sessionMode === "continue") store.saveAutomation({ ...latest, continueTaskId: task.id });
    });
    if (note) this.ctx.toast(`"${a.title}": ${note}`, "info");
    return manager.get(task.id);
  }

  private failLaunch(run: Run, error: unknown, branch?: string): void {
    const { store } = this.ctx;
    store.transaction(() => {
      const current = store.run(run.id);
      if (current && ACTIVE_RUN.includes(current.status)) this.recorder.finish(branch ? { ...current, branch } : current, { status: "error", error: `The run did not start: ${errorMessage(error)}` }, current.taskId);
    });
  }

  /** `stepsText`: the outcome of the run's steps, put after the prompt; `worktree`: the one they ran in. */
  private async startTask(a: Automation, run: Run, stepsText?: string, worktree?: TaskWorktree): Promise<{ task: Task; note?: string }> {
    const { manager, store } = this.ctx;
    const trigger = run.triggerId ? store.trigger(run.triggerId) : undefined;
    const workspace = this.ctx.config.workspaceContext ? await workspaceBlock(worktree ?? this.ctx.config.directory) : undefined;
    let note: string | undefined;
    if (a.sessionMode === "continue" && a.continueTaskId) {
      const earlier = manager.get(a.continueTaskId);
      if (earlier?.status === "completed" && (await this.ctx.host.sessionExists(earlier.id))) {
        this.ctx.runs.link(run.id, earlier.id);
        // The run's own spend (its daily total, its per-run budget) is what the task spends from here.
        const spentBefore = this.spending.treeSpend(earlier.id);
        this.ctx.runs.note(run.id, { spentBefore });
        const prompt = runPrompt(runContextLine(a, run, trigger), workspace, a.prompt, stepsText);
        return { task: await manager.resume(earlier.id, prompt, a.reportAgent, a.reportModel, budgetAfter(runBudget(a.budget), spentBefore)) };
      }
      note = earlier ? `the session of earlier runs could not be continued (${earlier.status === "completed" ? "it was deleted" : `it ended ${earlier.status}`}); this run starts a new one` : "the session of earlier runs is gone; this run starts a new one";
    }
    const prompt = runPrompt(runContextLine(a, run, trigger, note), workspace, a.prompt, stepsText);
    const task = await manager.launch({
      parentSessionID: a.reportTo, parentMessageID: runName(a.id, run.runNo!), parentAgent: a.reportAgent,
      parentModel: a.reportModel, description: runDescription(a, run), prompt, agent: a.agent,
      model: a.model, notify: false, extras: { expect: a.expect }, ...(a.worker ? { worker: a.worker } : {}),
      ...(a.isolation === "worktree" ? { isolation: "worktree" as const, worktreeBase: "default-branch" as const, ...(worktree ? { worktree } : {}) } : {}),
      onSaved: (saved) => this.ctx.runs.link(run.id, saved.id), ...budgetOf(runBudget(a.budget)),
    });
    return { task, note };
  }

  /** A deleted report-to session: the run goes on, the automation is marked and a toast says so once. */
  private async checkReportTo(a: Automation): Promise<void> {
    if (await this.ctx.host.sessionExists(a.reportTo)) return;
    const { store, clock } = this.ctx;
    const newly = store.transaction(() => {
      const latest = store.automation(a.id);
      if (!latest || latest.reportToGoneAt !== undefined) return false;
      store.saveAutomation({ ...latest, reportToGoneAt: clock.now() });
      return true;
    });
    if (newly) this.ctx.toast(`"${a.title}": its report-to session no longer exists; runs go on and are kept in the history (task_update report_to to change it)`, "warning");
  }
}

/** What a run's child is told: why it runs, the workspace (unless off), the prompt, the steps' outcome. */
function runPrompt(contextLine: string, workspace: string | undefined, prompt: string, stepsText: string | undefined): string {
  return [contextLine, workspace, prompt, stepsText].filter((part) => part !== undefined && part !== "").join("\n\n");
}

function budgetOf(budget: Budget | undefined): { budget?: Budget } {
  return budget ? { budget } : {};
}

/** A per-run budget for a resumed task: counted from what its tree had spent before the run. */
function budgetAfter(perRun: Budget | undefined, before: Spend): Budget | undefined {
  if (!perRun) return undefined;
  return {
    ...(perRun.usd !== undefined ? { usd: before.costUsd + perRun.usd } : {}),
    ...(perRun.tokens !== undefined ? { tokens: countedTokens(before) + perRun.tokens } : {}),
  };
}

/** The automation with one more run counted; done when that reaches max_runs. */
function counted(a: Automation, now: number): Automation {
  const runCount = a.runCount + 1;
  const done = a.maxRuns !== undefined && runCount >= a.maxRuns;
  return { ...a, runCount, updatedAt: now, ...(done ? { doneAt: now } : {}) };
}

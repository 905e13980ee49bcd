import { claimHeldByOther, newClaimer } from "../core/claims.ts";
import { errorMessage } from "../core/errors.ts";
import type { Task, TaskWorktree } from "../core/task.ts";
import { ACTIVE_RUN, type Automation, type Run } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import type { RunOutcome } from "./notify-policy.ts";
import { interruptedText, type RunRecorder } from "./run-recorder.ts";
import type { StepResult } from "./step-spec.ts";
import { branchLeftByRun } from "./run-worktree.ts";
import { failedStepError, failedStepPrompt, passedStepsPrompt, stepsResult, stepsStableText } from "./step-text.ts";

type Live = { controller: AbortController; done: Promise<void> };

/**
 * The steps phase of runs of automations with steps: the run is `running` without a task while
 * its steps run in this process; then it ends without the model (no prompt, or every step passed
 * and prompt_when is "failure"), or its task starts with the steps' outcome. The run row names the process (`stepsBy`), so that another process, or
 * this one after a restart, can tell a phase still going from one cut off by a crash.
 */
export class StepPhase {
  readonly holder = newClaimer();
  private live = new Map<number, Live>();
  private stopped = false;

  constructor(
    private ctx: AutomationContext,
    private recorder: RunRecorder,
    /** Starts the run's task with `stepsText` after its prompt; never throws (a refusal ends the run). */
    private launchTask: (a: Automation, run: Run, stepsText: string, isolated?: RunWorktree) => Promise<Task | undefined>,
  ) {}

  /** Moves a `starting` run into its steps phase and runs them in the background. */
  begin(a: Automation, run: Run): void {
    const { store } = this.ctx;
    const steps: StepResult[] = a.steps!.map((s) => ({ name: s.name, run: s.run, status: "not_run" }));
    const begun = store.transaction(() => {
      if (store.run(run.id)?.status !== "starting") return false;
      return this.ctx.runs.move(run.id, "running", { stepsBy: this.holder, steps });
    });
    if (!begun) return;
    const controller = new AbortController();
    const done = this.execute(a, { ...run, status: "running", stepsBy: this.holder, steps }, controller.signal)
      .catch((error) => this.ctx.logError(`The steps of automation ${a.id} failed`, error))
      .finally(() => this.live.delete(run.id));
    this.live.set(run.id, { controller, done });
  }

  /** Whether a run in its steps phase is still being run: here, or by another process that is alive. */
  running(run: Run): boolean {
    if (run.stepsBy === this.holder) return this.live.has(run.id);
    const now = this.ctx.clock.now();
    return run.stepsBy !== undefined && claimHeldByOther({ by: run.stepsBy, at: now }, this.holder, now);
  }

  /** Resolves once this process has finished the run's steps phase (at once when it runs none of it). */
  async whenDone(runId: number): Promise<void> {
    await this.live.get(runId)?.done;
  }

  /** Kills the running step of a run whose steps this process runs; resolves when the run has ended. False when not here. */
  async cancel(runId: number): Promise<boolean> {
    const live = this.live.get(runId);
    if (!live) return false;
    live.controller.abort();
    await live.done;
    return true;
  }

  /** Dispose: the runs in their steps phase end as interrupted and their steps are killed. */
  stop(): void {
    this.stopped = true;
    for (const [runId, live] of this.live) {
      try {
        this.ctx.store.transaction(() => {
          const run = this.ctx.store.run(runId);
          if (run && ACTIVE_RUN.includes(run.status) && run.taskId === undefined) this.recorder.finish(run, { status: "error", error: interruptedText(run) }, undefined);
        });
      } catch (error) {
        this.ctx.logError("Could not record a run cut off by the plugin's stop", error);
      }
      live.controller.abort();
    }
  }

  private async execute(a: Automation, run: Run, signal: AbortSignal): Promise<void> {
    const { config } = this.ctx;
    // Isolated: the steps run in a fresh worktree, never in the user's checkout; none made, nothing runs.
    let worktree: TaskWorktree | undefined;
    if (a.isolation === "worktree") {
      try {
        worktree = await this.makeWorktree(a, run);
      } catch (error) {
        return this.end(run, { status: "error", error: `The run's worktree could not be made, so nothing ran: ${errorMessage(error)}` });
      }
    }
    const place = { run, worktree, description: runDescription(a, run) };
    let outcome;
    try {
      // Loaded at the first run with steps: processes and files are no cost of the plugin's start.
      const { runSteps } = await import("./run-steps.ts");
      outcome = await runSteps(a.steps!, {
        cwd: worktree ? (worktree.workdir ?? worktree.path) : config.directory,
        env: { AUTOMATION_ID: a.id, AUTOMATION_RUN: String(run.runNo) },
        event: run.eventSummary !== undefined ? { summary: run.eventSummary, data: run.eventData } : undefined,
        signal,
        clock: this.ctx.clock,
        onProgress: (results) => this.save(run.id, results),
      });
    } catch (error) {
      return this.endIn(place, { status: "error", error: `The steps could not run: ${errorMessage(error)}` });
    }
    if (this.stopped) return;
    const { results, failure, cancelled } = outcome;
    if (cancelled) return this.endIn(place, { status: "cancelled", error: `Cancelled during step "${results.find((r) => r.status === "cancelled")?.name ?? "?"}".` });
    const hasPrompt = a.prompt.trim() !== "";
    if (failure && !hasPrompt) return this.endIn(place, { status: "error", error: failedStepError(failure.result) });
    // The steps are the happy path: the model takes over only when one failed, unless asked for always.
    if (!hasPrompt || (!failure && a.promptWhen !== "always")) return this.endIn(place, { status: "completed", result: stepsResult(results), stableText: stepsStableText(results) });
    const text = failure ? failedStepPrompt(failure.result, failure.output, results) : passedStepsPrompt(results);
    if (signal.aborted) return this.endIn(place, { status: "cancelled", error: "Cancelled after its steps, before its task started." });
    const task = await this.launchTask(a, run, text, worktree && { worktree, settle: () => this.branchLeft(place) });
    if (task && signal.aborted) await this.ctx.manager.cancel(task, "Cancelled by background_cancel.");
  }

  /** A fresh worktree of the default branch's latest commit for an isolated run's steps (and then its task). */
  private async makeWorktree(a: Automation, run: Run): Promise<TaskWorktree> {
    const support = this.ctx.manager.worktrees;
    if (!support) throw new Error('isolation "worktree" is not available in this build. Leave out isolation.');
    return support.create(runDescription(a, run), "default-branch");
  }

  /** Ends a run that has no task: an isolated one once its worktree is settled, naming the branch it left. */
  private async endIn(place: RunPlace, outcome: RunOutcome): Promise<void> {
    const branch = await this.branchLeft(place);
    this.end(branch ? { ...place.run, branch } : place.run, outcome);
  }

  /** The branch an isolated run without a task leaves (undefined: it changed nothing, or it is not isolated). */
  private async branchLeft({ run, worktree, description }: RunPlace): Promise<string | undefined> {
    if (!worktree) return undefined;
    return branchLeftByRun(worktree, run.id, description).catch((error) => {
      this.ctx.logError(`Could not settle the worktree of automation run ${run.id}; its branch ${worktree.branch} is kept`, error);
      return worktree.branch;
    });
  }

  private save(runId: number, steps: StepResult[]): void {
    if (this.stopped) return;
    try {
      this.ctx.runs.note(runId, { steps });
    } catch (error) {
      this.ctx.logError("Could not record a step's progress", error);
    }
  }

  private end(run: Run, outcome: RunOutcome): void {
    if (this.stopped) return;
    const { store } = this.ctx;
    store.transaction(() => {
      const current = store.run(run.id);
      if (current && ACTIVE_RUN.includes(current.status)) this.recorder.finish(run.branch ? { ...current, branch: run.branch } : current, outcome, undefined);
    });
  }
}

/** An isolated run's worktree made for its steps, given to its task; `settle`: what a failed launch does with it. */
export type RunWorktree = { worktree: TaskWorktree; settle: () => Promise<string | undefined> };

type RunPlace = { run: Run; worktree?: TaskWorktree; description: string };

/** The run's task's description, also its worktree's and branch's name. */
export function runDescription(a: Automation, run: Run): string {
  return `${a.title} (automation run #${run.runNo})`;
}

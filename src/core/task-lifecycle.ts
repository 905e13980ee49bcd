import { isSettled, RUNNING_STATUSES, transition, UNSETTLED_STATUSES, type Task, type TaskStatus, type TaskWorktree } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import type { HostMessage } from "../host/host.ts";
import { TaskError, errorMessage } from "./errors.ts";
import { judgeCompletion, type CompletionVerdict } from "./completion-check.ts";
import { ProgressTracker } from "./progress-tracker.ts";
import { AnswerTracker } from "./answer-tracker.ts";
import type { ParentNotifier } from "./parent-notifier.ts";
import type { CoreContext } from "./core-context.ts";
import { SettleEvents } from "./settle-events.ts";
import type { RunEndDecision, TaskHooks } from "./task-hooks.ts";
import { openChildTasks, openDescendants, waitingReason } from "./nested-tasks.ts";
import type { BudgetStop } from "./budget.ts";
import { WorktreeTamperedError } from "./task-worktree.ts";
import type { TaskOwnership } from "./task-ownership.ts";

/** Enough of a child's newest messages to judge its last run. */
export const RECENT_MESSAGES = 6;

/**
 * How a task's run goes, from the first prompt to its one settle: prompting the child, judging
 * whether its run is over, and settling it (the only place a task ends). It owns the live state
 * of running children (progress, answers). Other parts hear settles through `events`; the host,
 * store and clock come from the manager's CoreContext, which each part is given explicitly.
 */
export class TaskLifecycle {
  readonly progress = new ProgressTracker();
  readonly answers = new AnswerTracker();
  /** Children stopped at a budget, until they are idle: aborted again before any further model request (see TaskManager.beforeModelRequest). */
  readonly halted = new Set<string>();
  readonly events: SettleEvents;
  private checking = new Set<string>();

  constructor(
    private ctx: CoreContext,
    /** Records the parent's notification inside the settle. */
    readonly notifier: ParentNotifier,
    /** Evidence, expectations and milestones hook in here (see TaskHooks). */
    readonly hooks: TaskHooks,
    /** The running tasks this instance drives: only those are followed and settled from the host's view. */
    readonly ownership: TaskOwnership,
  ) {
    this.events = new SettleEvents(ctx);
    try {
      this.trackActive();
    } catch (error) {
      this.logError("Could not read the running background tasks; the start retries", error);
    }
  }

  /** Follows the progress of every running task this instance holds (idempotent). */
  trackActive(): void {
    for (const task of this.ownedTasks()) this.progress.track(task.id, task.progress);
  }

  /** The running tasks this instance drives; another process's children are its own to watch. */
  ownedTasks(): Task[] {
    return this.ctx.store.list({ statuses: RUNNING_STATUSES, includeCleared: true })
      .filter((t) => this.ownership.holds(t.id)).flatMap((t) => this.ctx.store.get(t.id) ?? []);
  }

  /** This instance no longer drives the task (another process took it over): it stops following it. */
  forget(taskId: string): void {
    this.progress.release(taskId);
    this.answers.release(taskId);
  }

  /** Tasks whose live progress is followed, counted twice when answers are followed too. */
  trackedCount(): number {
    return this.progress.size() + this.answers.size();
  }

  /**
   * Commits the settle and its notification together, then tells the parent. False when already
   * settled. `notify: false` when the caller reports the outcome itself (a tool's answer).
   */
  settle(taskId: string, to: TaskStatus, fields: { result?: string; error?: string; worktree?: TaskWorktree }, { notify = true } = {}): boolean {
    const settled = this.ctx.store.transaction(() => {
      const task = this.ctx.store.get(taskId);
      if (!task || isSettled(task.status)) return undefined;
      const now = this.ctx.clock.now();
      transition(task, to, now);
      Object.assign(task, fields, { progress: this.progress.get(taskId) ?? task.progress });
      this.callHook("settling", () => this.hooks.settling?.(task));
      task.spent = this.ctx.spend?.line(taskId);
      this.ctx.store.save(task);
      this.ctx.store.appendEvent({ taskId, at: now, kind: `status:${to}`, detail: fields.error });
      if (notify && task.notify !== false) {
        const siblingsBusy = this.ctx.store.list({ parentSessionID: task.parentSessionID, statuses: UNSETTLED_STATUSES, includeCleared: true }).length > 0;
        // A child waiting for its own tasks must hear the last of them, however it ended, or it waits forever.
        const parentIsTask = RUNNING_STATUSES.includes(this.ctx.store.get(task.parentSessionID)?.status as TaskStatus);
        this.notifier.record(task, to === "error" || (!siblingsBusy && (to === "completed" || parentIsTask)));
      }
      this.events.emitSettling(task);
      return task;
    });
    if (!settled) return false;
    this.ownership.settled(taskId);
    // A settle that did not come from a finished answer (an error, a cancel): its work is committed all the same.
    if (settled.worktree && !fields.worktree) this.detach(`Could not commit the work of task ${taskId} in its worktree`, this.keepWorktreeChanges(taskId));
    this.progress.release(taskId);
    this.answers.release(taskId);
    this.ctx.spend?.forget(taskId);
    this.clearWaiting(settled.parentSessionID);
    this.events.emitSettled(settled);
    if (to !== "completed") this.detach(`Could not abort the background tasks of ${taskId}`, this.abortEach(this.cancelDescendants(taskId)));
    return true;
  }

  /** Work left running with nothing awaiting it: a failure is logged, never an unhandled rejection. */
  detach(what: string, work: Promise<unknown>): void {
    this.ctx.log.detach(what, work);
  }

  /** Cancels the task's own background tasks first (deepest first), so nothing below it runs on; its notice lists them. */
  async cancel(task: TaskSummary, reason?: string): Promise<boolean> {
    const wasQueued = task.status === "queued";
    const below = this.cancelDescendants(task.id);
    const ids = below.map((t) => t.id);
    const listed = ids.length > 0 ? `${reason ?? "Cancelled."} Its own background tasks were cancelled too: ${ids.join(", ")}.` : reason;
    if (!this.settle(task.id, "cancelled", { error: listed })) return false;
    await this.abortEach(below);
    if (wasQueued) return true;
    await this.ctx.host.abort(task.id).catch((error) => this.logError(`Could not abort child session ${task.id}`, error));
    return true;
  }

  /**
   * Settles every unsettled task below this one as cancelled, deepest first, telling nobody (their
   * parent goes too). Synchronous, so a caller that drops the rows next sees them settled. Returns them.
   */
  cancelDescendants(taskId: string): TaskSummary[] {
    return openDescendants(this.ctx.store, taskId).filter((below) =>
      this.settle(below.id, "cancelled", { error: `Cancelled with ${taskId}, the task that launched it.` }, { notify: false }));
  }

  /** Stops the child sessions of cancelled tasks, in order (deepest first); a queued one never started. */
  async abortEach(tasks: TaskSummary[]): Promise<void> {
    for (const t of tasks) {
      if (t.status !== "queued") await this.ctx.host.abort(t.id).catch((error) => this.logError(`Could not abort child session ${t.id}`, error));
    }
  }

  /** A settle from a path that must not throw (a failed store is logged; the poll tries again). */
  settleSafely(...args: Parameters<TaskLifecycle["settle"]>): boolean {
    try {
      return this.settle(...args);
    } catch (error) {
      this.logError(`Could not settle task ${args[0]}`, error);
      return false;
    }
  }

  /**
   * A request took the task's tree past its budget: the task settles as error at once with the
   * latest answer it had as its result (the parent is told once), its child is aborted, and so are
   * its running descendants (the settle cancels them). An already settled task: its descendants only.
   */
  stopAtBudget({ taskId, error }: BudgetStop, answerFromPoll?: string): void {
    const task = this.ctx.store.get(taskId);
    if (!task) return;
    if (isSettled(task.status)) {
      const below = this.cancelDescendants(taskId);
      for (const t of below) this.halted.add(t.id);
      this.detach(`Could not abort the background tasks of ${taskId}`, this.abortEach(below));
      return;
    }
    const result = this.answers.lastAnswer(taskId) ?? answerFromPoll;
    const below = openDescendants(this.ctx.store, taskId);
    if (!this.settleSafely(taskId, "error", { error, ...(result ? { result } : {}) })) return;
    for (const t of [task, ...below]) this.halted.add(t.id);
    if (task.status !== "queued") this.detach(`Could not abort child session ${taskId}`, this.ctx.host.abort(taskId));
  }

  /** Prompts a running task's child; when the host refuses, the task is settled as error and a TaskError thrown. */
  async sendPrompt(task: Task, text: string, { notify = true } = {}): Promise<void> {
    try {
      await this.ctx.host.prompt({ sessionID: task.id, text, agent: task.agent, model: task.model });
    } catch (error) {
      this.settleSafely(task.id, "error", { error: `Could not send the prompt: ${errorMessage(error)}` }, { notify });
      throw new TaskError(`The child session did not accept the prompt: ${errorMessage(error)}`);
    }
  }

  /** With `fromEvents`, the answer seen in events is enough when it is final; else the host is asked. */
  async checkCompletion(taskId: string, fromEvents = false): Promise<void> {
    if (this.checking.has(taskId)) return;
    this.checking.add(taskId);
    try {
      const task = this.ctx.store.get(taskId);
      // Only the owner reads the child's state: another process's idle view says nothing of a child it does not drive.
      if (!task || !RUNNING_STATUSES.includes(task.status) || !this.ownership.holds(taskId)) return;
      let verdict: CompletionVerdict = fromEvents ? judgeCompletion(task, this.answers.recent(taskId)) : { kind: "pending" };
      if (verdict.kind === "pending") verdict = judgeCompletion(task, await this.recentCounted(taskId));
      if (verdict.kind === "completed" && this.waitsForOwnTasks(task)) return;
      if (verdict.kind === "completed") await this.endRun(task, verdict.result);
      if (verdict.kind === "error") this.settle(taskId, "error", { error: verdict.error });
    } catch (error) {
      this.logError(`Could not check task ${taskId}`, error);
    } finally {
      this.checking.delete(taskId);
    }
  }

  /** The child's latest messages, their spend counted too: the poll is the fallback for events that were missed. */
  private async recentCounted(taskId: string): Promise<HostMessage[]> {
    const messages = await this.ctx.host.recentMessages(taskId, RECENT_MESSAGES);
    for (const m of messages) {
      const stop = m.usage && this.ctx.spend?.record(taskId, m.id, m.usage);
      const answer = () => messages.findLast((a) => a.role === "assistant" && a.text.trim() !== "")?.text.trim();
      if (stop) this.stopAtBudget(stop, stop.taskId === taskId ? answer() : undefined);
    }
    return messages;
  }

  /**
   * An answer while tasks of its own still run is an interim one ("waiting for the helper"): the
   * task goes on until the last of them has settled and the child has answered after hearing it.
   */
  waitsForOwnTasks(task: Task): boolean {
    const reason = waitingReason(this.ctx.store, task.id);
    if (!reason) return false;
    if (this.progress.get(task.id)?.note !== reason) {
      this.progress.setNote(task.id, reason);
      this.ctx.store.appendEvent({ taskId: task.id, at: this.ctx.clock.now(), kind: "waiting", detail: reason });
    }
    return true;
  }

  /**
   * An idle of a settled task's child: something woke it after its task was reported (a late
   * notice). An answer newer than the settle goes to the parent as a follow-up, once per answer.
   */
  async checkAnsweredAgain(sessionID: string): Promise<void> {
    const { store, host, clock } = this.ctx;
    if (this.progress.isTracked(sessionID)) return;
    const task = store.get(sessionID);
    if (!task || task.status !== "completed" || task.notify === false || task.settledAt === undefined) return;
    const last = (await host.recentMessages(sessionID, RECENT_MESSAGES)).at(-1);
    if (!last || last.role !== "assistant" || last.createdAt <= task.settledAt || last.completedAt === undefined) return;
    if (last.toolCallsPending || last.error || last.summary || last.text.trim() === "") return;
    const followed = store.transaction(() => {
      const current = store.get(sessionID);
      if (!current || current.status !== "completed") return undefined;
      current.result = last.text.trim();
      store.save(current);
      store.appendEvent({ taskId: current.id, at: clock.now(), kind: "answered-again" });
      this.notifier.recordFollowUp(current, last.id);
      return current;
    });
    if (followed) this.detach(`Could not notify parent session ${followed.parentSessionID}`, this.notifier.deliver(followed.parentSessionID));
  }

  private clearWaiting(taskId: string): void {
    const note = this.progress.get(taskId)?.note;
    if (note?.startsWith("waiting for") && openChildTasks(this.ctx.store, taskId).length === 0) this.progress.setNote(taskId, undefined);
  }

  /** A run ended with an answer: the runEnded hook decides whether it completes, goes on, or fails. */
  private async endRun(task: Task, result: string): Promise<void> {
    let decision: RunEndDecision = { kind: "complete" };
    try {
      decision = (await this.hooks.runEnded?.(task, result)) ?? decision;
    } catch (error) {
      this.logError(`The run-end check of task ${task.id} failed; completing it`, error);
    }
    // Only an isolated task waits for git here: the others settle in the same tick as before.
    const changes = decision.kind !== "continue" && task.worktree ? await this.worktreeChanges(task) : {};
    // A worktree whose .git the child rewrote was not settled: the task ends as an error saying so.
    if (decision.kind === "complete") this.settle(task.id, changes.error ? "error" : "completed", { result, ...changes });
    if (decision.kind === "error") this.settle(task.id, "error", { result, error: decision.error, ...changes });
    if (decision.kind === "continue") await this.continueRun(task.id, decision.prompt, decision.detail);
  }

  /**
   * An isolated task's work, committed on its branch (nothing is lost when the worktree goes), and
   * the block its result shows. A git failure is shown in the block and logged; the task settles.
   */
  private async worktreeChanges(task: Task): Promise<{ worktree?: TaskWorktree; error?: string }> {
    const { worktree } = task;
    if (!worktree || !this.ctx.worktrees) return {};
    try {
      return { worktree: { ...worktree, changes: await this.ctx.worktrees.settle(task) } };
    } catch (error) {
      if (error instanceof WorktreeTamperedError) return { worktree: { ...worktree, changes: `Worktree: branch ${worktree.branch}, not settled: ${error.message}` }, error: error.message };
      this.logError(`Could not read the changes of task ${task.id} in its worktree`, error);
      return { worktree: { ...worktree, changes: `Worktree: branch ${worktree.branch} (its changes could not be read: ${errorMessage(error)})` } };
    }
  }

  /** After a settle without an answer: the worktree's work committed and its block stored, telling nobody. */
  private async keepWorktreeChanges(taskId: string): Promise<void> {
    const task = this.ctx.store.get(taskId);
    if (!task?.worktree) return;
    const { worktree } = await this.worktreeChanges(task);
    const current = this.ctx.store.get(taskId);
    // Only its changes block: a background_merge in the meantime may have recorded the worktree removed.
    if (current?.worktree && worktree) this.ctx.store.save({ ...current, worktree: { ...current.worktree, changes: worktree.changes } });
  }

  /** Sends a running child back to work in the same run (no one typed "continue"). */
  private async continueRun(taskId: string, prompt: string, detail: string): Promise<void> {
    const task = this.ctx.store.get(taskId);
    if (!task || !RUNNING_STATUSES.includes(task.status)) return;
    const now = this.ctx.clock.now();
    task.promptedAt = now;
    task.progress = this.progress.get(taskId) ?? task.progress;
    task.progress.lastActivityAt = now;
    this.ctx.store.transaction(() => {
      this.ctx.store.save(task);
      this.ctx.store.appendEvent({ taskId, at: now, kind: "continued", detail });
    });
    await this.sendPrompt(task, prompt).catch(() => undefined); // sendPrompt settles the task as error itself
  }

  /** Runs a hook; one that throws is logged and skipped. */
  callHook(name: keyof TaskHooks, run: () => void): void {
    try {
      run();
    } catch (error) {
      this.logError(`The ${name} hook failed`, error);
    }
  }

  /** Whole tasks: few (bounded by the concurrency limits), and their callers need the prompt. */
  activeTasks(): Task[] {
    return this.ctx.store.list({ statuses: RUNNING_STATUSES, includeCleared: true }).flatMap((t) => this.ctx.store.get(t.id) ?? []);
  }

  logError(message: string, error: unknown): void {
    this.ctx.log.error(message, error);
  }
}

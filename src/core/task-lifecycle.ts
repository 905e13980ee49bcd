import type { Clock } from "./clock.ts";
import type { Host } from "../host/host.ts";
import type { TaskStore } from "./task-store.ts";
import { isSettled, transition, type Task, type TaskStatus } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import { TaskError, errorMessage } from "./errors.ts";
import { judgeCompletion, type CompletionVerdict } from "./completion-check.ts";
import { ProgressTracker } from "./progress-tracker.ts";
import { AnswerTracker } from "./answer-tracker.ts";
import { SettleWaiters } from "./settle-waiters.ts";
import { ParentNotifier } from "./parent-notifier.ts";
import type { RunEndDecision, TaskHooks } from "./task-hooks.ts";

export const ACTIVE: TaskStatus[] = ["running", "resumed"];
/** Not settled: waiting for a slot or running. */
export const UNSETTLED: TaskStatus[] = ["queued", ...ACTIVE];
/** Enough of a child's newest messages to judge its last run. */
export const RECENT_MESSAGES = 6;

/**
 * The shared state of the task core and the moves every part of it makes: settling a task (the
 * one place a task ends), prompting a child, judging completion. The manager, the scheduler, the
 * watcher and the event router all work through it.
 */
export class TaskLifecycle {
  readonly progress = new ProgressTracker();
  readonly answers = new AnswerTracker();
  readonly waiters: SettleWaiters;
  readonly notifier: ParentNotifier;
  /** Called after every settle, once it is committed (frees a concurrency slot). */
  onSettled: () => void = () => {};
  /** Called inside every settle's transaction, after the task row is saved (TaskManager.onSettle). */
  readonly settleListeners: ((task: Task) => void)[] = [];
  /** Evidence, expectations and milestones hook in here (see TaskHooks). */
  hooks: TaskHooks = {};
  private checking = new Set<string>();

  constructor(
    readonly host: Host,
    readonly store: TaskStore,
    readonly clock: Clock,
    resultCapChars: number,
  ) {
    this.waiters = new SettleWaiters(clock);
    this.notifier = new ParentNotifier({
      host, store, clock,
      resultCap: resultCapChars,
      onError: (message, error) => this.logError(message, error),
    });
    try {
      this.trackActive();
    } catch (error) {
      this.logError("Could not read the running background tasks; the start retries", error);
    }
  }

  /** Follows the progress of every running task (idempotent). */
  trackActive(): void {
    for (const task of this.activeTasks()) this.progress.track(task.id, task.progress);
  }

  /**
   * Commits the settle and its notification together, then tells the parent. False when already
   * settled. `notify: false` when the caller reports the outcome itself (a tool's answer).
   */
  settle(taskId: string, to: TaskStatus, fields: { result?: string; error?: string }, { notify = true } = {}): boolean {
    const settled = this.store.transaction(() => {
      const task = this.store.get(taskId);
      if (!task || isSettled(task.status)) return undefined;
      const now = this.clock.now();
      transition(task, to, now);
      Object.assign(task, fields, { progress: this.progress.get(taskId) ?? task.progress });
      this.callHook("settling", () => this.hooks.settling?.(task));
      this.store.save(task);
      this.store.appendEvent({ taskId, at: now, kind: `status:${to}`, detail: fields.error });
      if (notify && task.notify !== false) {
        const siblingsBusy = this.store.list({ parentSessionID: task.parentSessionID, statuses: UNSETTLED, includeCleared: true }).length > 0;
        this.notifier.record(task, to === "error" || (to === "completed" && !siblingsBusy));
      }
      this.tellSettleListeners(task);
      return task;
    });
    if (!settled) return false;
    this.progress.release(taskId);
    this.answers.release(taskId);
    this.waiters.notifySettled(taskId);
    this.detach(`Could not notify parent session ${settled.parentSessionID}`, this.notifier.deliver(settled.parentSessionID));
    this.detach("Could not start queued background tasks", Promise.resolve().then(() => this.onSettled()));
    return true;
  }

  /**
   * Lets work go on in the background with nothing awaiting it: a failure is logged through the
   * host, never left as an unhandled rejection inside OpenCode.
   */
  detach(what: string, work: Promise<unknown>): void {
    work.catch((error) => this.logError(what, error));
  }

  private tellSettleListeners(task: Task): void {
    for (const listener of this.settleListeners) {
      try {
        // Nested: a listener that throws halfway leaves none of its writes behind.
        this.store.transaction(() => listener(structuredClone(task)));
      } catch (error) {
        this.logError(`A settle listener failed for task ${task.id}; the settle stands`, error);
      }
    }
  }

  async cancel(task: TaskSummary, reason?: string): Promise<boolean> {
    const wasQueued = task.status === "queued";
    if (!this.settle(task.id, "cancelled", { error: reason })) return false;
    if (wasQueued) return true;
    await this.host.abort(task.id).catch((error) => this.logError(`Could not abort child session ${task.id}`, error));
    return true;
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

  /** Prompts a running task's child; when the host refuses, the task is settled as error and a TaskError thrown. */
  async sendPrompt(task: Task, text: string, { notify = true } = {}): Promise<void> {
    try {
      await this.host.prompt({ sessionID: task.id, text, agent: task.agent, model: task.model });
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
      const task = this.store.get(taskId);
      if (!task || !ACTIVE.includes(task.status)) return;
      let verdict: CompletionVerdict = fromEvents ? judgeCompletion(task, this.answers.recent(taskId)) : { kind: "pending" };
      if (verdict.kind === "pending") verdict = judgeCompletion(task, await this.host.recentMessages(taskId, RECENT_MESSAGES));
      if (verdict.kind === "completed") await this.endRun(task, verdict.result);
      if (verdict.kind === "error") this.settle(taskId, "error", { error: verdict.error });
    } catch (error) {
      this.logError(`Could not check task ${taskId}`, error);
    } finally {
      this.checking.delete(taskId);
    }
  }

  /** A run ended with an answer: the runEnded hook decides whether it completes, goes on, or fails. */
  private async endRun(task: Task, result: string): Promise<void> {
    let decision: RunEndDecision = { kind: "complete" };
    try {
      decision = (await this.hooks.runEnded?.(task, result)) ?? decision;
    } catch (error) {
      this.logError(`The run-end check of task ${task.id} failed; completing it`, error);
    }
    if (decision.kind === "complete") this.settle(task.id, "completed", { result });
    if (decision.kind === "error") this.settle(task.id, "error", { result, error: decision.error });
    if (decision.kind === "continue") await this.continueRun(task.id, decision.prompt, decision.detail);
  }

  /** Sends a running child back to work in the same run (no one typed "continue"). */
  private async continueRun(taskId: string, prompt: string, detail: string): Promise<void> {
    const task = this.store.get(taskId);
    if (!task || !ACTIVE.includes(task.status)) return;
    const now = this.clock.now();
    task.promptedAt = now;
    task.progress = this.progress.get(taskId) ?? task.progress;
    task.progress.lastActivityAt = now;
    this.store.transaction(() => {
      this.store.save(task);
      this.store.appendEvent({ taskId, at: now, kind: "continued", detail });
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
    return this.store.list({ statuses: ACTIVE, includeCleared: true }).flatMap((t) => this.store.get(t.id) ?? []);
  }

  logError(message: string, error: unknown): void {
    this.log("error", message, { error: errorMessage(error) });
  }

  log(level: "info" | "error", message: string, extra: Record<string, unknown>): void {
    // If logging itself fails there is nowhere left to report it; the host must not see a throw.
    try {
      this.host.log(level, message, extra).catch(() => undefined);
    } catch {
      // a host whose log throws synchronously: same as above
    }
  }
}

import type { Clock } from "./clock.ts";
import type { Host, HostEvent } from "../host/host.ts";
import type { TaskStore } from "./task-store.ts";
import { isSettled, transition, type ModelRef, type Task, type TaskStatus } from "./task.ts";
import { TaskError, errorMessage } from "./errors.ts";
import { judgeCompletion } from "./completion-check.ts";
import { ProgressTracker } from "./progress-tracker.ts";
import { AnswerTracker } from "./answer-tracker.ts";
import { SettleWaiters, type WaitOutcome } from "./settle-waiters.ts";
import { ParentNotifier } from "./parent-notifier.ts";
import { Poller } from "./poller.ts";
import { lookupTasks, shortestUniquePrefix } from "./task-ids.ts";
import { CONTINUE_PROMPT, recoverTasks } from "./recovery.ts";

export type ManagerConfig = {
  pollIntervalMs: number;
  resultCapChars: number;
  idleEvents: boolean;
  onInterrupted: "resume" | "fail";
  staleAfterMinutes: number;
};

export type LaunchInput = {
  parentSessionID: string;
  parentMessageID: string;
  parentAgent: string;
  parentModel?: ModelRef;
  description: string;
  prompt: string;
  agent: string;
};

/** Prepares a forked child session; given to the manager so the core stays free of fork details. */
export type ForkPreparer = (input: LaunchInput & { title: string }) => Promise<{ sessionID: string; promptText: string }>;

const ACTIVE: TaskStatus[] = ["running", "resumed"];
const RECENT_MESSAGES = 6;

/** Owns the task lifecycle: launch, resume, cancel, completion, progress and parent notification. */
export class TaskManager {
  readonly progress = new ProgressTracker();
  private answers = new AnswerTracker();
  readonly waiters: SettleWaiters;
  readonly notifier: ParentNotifier;
  readonly poller: Poller;
  private checking = new Set<string>();

  constructor(
    private host: Host,
    private store: TaskStore,
    private clock: Clock,
    private config: ManagerConfig,
    private forkPreparer?: ForkPreparer,
  ) {
    this.waiters = new SettleWaiters(clock);
    this.notifier = new ParentNotifier({
      host, store, clock,
      resultCap: config.resultCapChars,
      shownId: (task) => this.shownId(task),
      onError: (message, error) => this.logError(message, error),
    });
    this.poller = new Poller(clock, config.pollIntervalMs, () => this.poll(), () => this.hasWork());
    for (const task of this.activeTasks()) this.progress.track(task.id, task.progress);
  }

  /** Reconciles tasks left running by an earlier process, then starts polling (and outbox delivery). */
  async start(): Promise<void> {
    try {
      await recoverTasks({
        host: this.host, store: this.store, clock: this.clock, onInterrupted: this.config.onInterrupted,
        settle: (id, to, fields) => this.settle(id, to, fields),
        continueInterrupted: (task) => this.continueInterrupted(task),
      }, this.activeTasks());
    } catch (error) {
      this.logError("Recovering background tasks after a restart failed; polling will retry", error);
    }
    this.poller.ensureRunning();
  }

  async launch(input: LaunchInput & { fork?: boolean }): Promise<Task> {
    const model = await this.childModel(input.agent, input.parentModel);
    const title = `${input.description} (@${input.agent} background)`;
    const { sessionID, promptText } = input.fork
      ? await this.requireForkPreparer()({ ...input, title })
      : { sessionID: (await this.host.createSession({ parentID: input.parentSessionID, title })).id, promptText: input.prompt };
    const now = this.clock.now();
    const task: Task = {
      id: sessionID, parentSessionID: input.parentSessionID, batchId: input.parentMessageID,
      description: input.description, prompt: input.prompt, agent: input.agent, model,
      parentAgent: input.parentAgent, parentModel: input.parentModel, status: "running",
      isForked: Boolean(input.fork), resumeCount: 0,
      progress: { toolCalls: 0, lastTools: [], lastActivityAt: now }, createdAt: now, promptedAt: now,
    };
    this.store.save(task);
    this.store.appendEvent({ taskId: task.id, at: now, kind: "launched", detail: input.fork ? "forked" : undefined });
    this.progress.track(task.id, task.progress);
    this.notifier.setActivity(input.parentSessionID, "busy");
    await this.sendPrompt(task, promptText);
    this.poller.ensureRunning();
    return this.store.get(task.id)!;
  }

  async resume(taskId: string, prompt: string, parentAgent: string, parentModel?: ModelRef): Promise<Task> {
    const task = this.requireOne(taskId);
    if (task.status === "resumed") throw new TaskError(`Task ${this.shownId(task)} is already being resumed. Wait for it with background_output, then resume again.`);
    if (task.status !== "completed") throw new TaskError(`Task ${this.shownId(task)} is ${task.status}; only a completed task can be resumed. Start a new background_task instead.`);
    if (!(await this.host.sessionExists(task.id))) {
      throw new TaskError(`Task ${this.shownId(task)}'s session no longer exists, so it cannot be resumed. Start a new background_task with the context it needs.`);
    }
    const now = this.clock.now();
    transition(task, "resumed", now);
    Object.assign(task, { promptedAt: now, parentAgent, parentModel: parentModel ?? task.parentModel });
    task.progress.lastActivityAt = now;
    this.store.save(task);
    this.store.appendEvent({ taskId: task.id, at: now, kind: "resumed", detail: `resume #${task.resumeCount}` });
    this.progress.track(task.id, task.progress);
    this.notifier.setActivity(task.parentSessionID, "busy");
    await this.sendPrompt(task, prompt);
    this.poller.ensureRunning();
    return this.store.get(task.id)!;
  }

  async cancel(task: Task, reason?: string): Promise<boolean> {
    if (!this.settle(task.id, "cancelled", { error: reason })) return false;
    try {
      await this.host.abort(task.id);
    } catch (error) {
      this.logError(`Could not abort child session ${task.id}`, error);
    }
    return true;
  }

  /** Waits until every task settles, the timeout passes or the signal aborts. */
  async waitFor(tasks: Task[], timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    const deadline = this.clock.now() + timeoutMs;
    for (const task of tasks) {
      const remaining = Math.max(0, deadline - this.clock.now());
      const outcome = await this.waiters.wait(task.id, () => this.isSettledNow(task.id), remaining, signal);
      if (outcome.timedOut || outcome.aborted) return outcome;
    }
    return { timedOut: false, aborted: false };
  }

  markRetrieved(task: Task): void {
    if (!isSettled(task.status) || task.retrievedAt !== undefined) return;
    const stored = this.store.get(task.id);
    if (!stored) return;
    stored.retrievedAt = this.clock.now();
    this.store.save(stored);
    this.store.appendEvent({ taskId: task.id, at: stored.retrievedAt, kind: "retrieved" });
  }

  /** Hides the parent's settled tasks from its list; returns how many were hidden and how many still run. */
  clear(parentSessionID: string): { cleared: number; running: Task[] } {
    const tasks = this.store.list({ parentSessionID });
    const now = this.clock.now();
    const settled = tasks.filter((t) => isSettled(t.status));
    for (const task of settled) {
      task.clearedAt = now;
      this.store.save(task);
      this.store.appendEvent({ taskId: task.id, at: now, kind: "cleared" });
    }
    return { cleared: settled.length, running: tasks.filter((t) => !isSettled(t.status)) };
  }

  lookup(id: string) {
    return lookupTasks(id, this.store.list({ includeCleared: true }));
  }

  listForParent(parentSessionID: string, status?: TaskStatus): Task[] {
    return this.store.list({ parentSessionID, statuses: status ? [status] : undefined })
      .map((task) => ({ ...task, progress: this.progress.get(task.id) ?? task.progress }));
  }

  withLiveProgress(task: Task): Task {
    return { ...task, progress: this.progress.get(task.id) ?? task.progress };
  }

  shownId(task: Task): string {
    return shortestUniquePrefix(task.id, this.store.list({ includeCleared: true }).map((t) => t.id));
  }

  handleEvent(event: HostEvent): void {
    const { sessionID } = event;
    if (event.type === "status") this.notifier.setActivity(sessionID, event.status);
    if (event.type === "idle") this.notifier.setActivity(sessionID, "idle");
    if (event.type === "idle" || (event.type === "status" && event.status === "idle")) void this.notifier.deliver(sessionID);
    if (event.type === "deleted") this.onSessionDeleted(sessionID);
    if (!this.progress.isTracked(sessionID)) return;
    const now = this.clock.now();
    if (event.type === "tool") {
      if (this.progress.recordTool(sessionID, event.callID, event.tool, now)) this.saveProgress(sessionID);
    } else this.progress.recordActivity(sessionID, now);
    if (event.type === "message") this.answers.recordMessage(sessionID, event.message);
    if (event.type === "text") this.answers.recordText(sessionID, event.messageID, event.partID, event.text);
    if (event.type === "idle" && this.config.idleEvents) void this.checkCompletion(sessionID, true);
    if (event.type === "error") this.onChildError(sessionID, event.name, event.message);
  }

  /** One status call for every tracked session: settles tasks whose idle was missed, delivers held notifications. */
  async poll(): Promise<void> {
    try {
      const statuses = await this.host.statuses();
      for (const parent of this.notifier.waitingParents()) {
        this.notifier.setActivity(parent, statuses[parent] ?? "idle");
        if (!statuses[parent]) await this.notifier.deliver(parent);
      }
      const active = this.activeTasks();
      await Promise.all(active.filter((t) => !statuses[t.id]).map((t) => this.checkCompletion(t.id)));
      await Promise.all(this.activeTasks().map((t) => this.checkStale(t)));
    } catch (error) {
      this.logError("Background task poll failed", error);
    }
  }

  /** Timers and listeners still held; zero when nothing is running or waiting. */
  debugCounts() {
    return {
      pollTimer: this.poller.isRunning() ? 1 : 0,
      waiters: this.waiters.size(),
      trackedTasks: this.progress.size() + this.answers.size(),
    };
  }

  dispose(): void {
    this.poller.stop();
  }

  /** With `fromEvents`, the answer seen in events is enough when it is final; else the host is asked. */
  async checkCompletion(taskId: string, fromEvents = false): Promise<void> {
    if (this.checking.has(taskId)) return;
    this.checking.add(taskId);
    try {
      const task = this.store.get(taskId);
      if (!task || isSettled(task.status)) return;
      let verdict = fromEvents ? judgeCompletion(task, this.answers.recent(taskId)) : { kind: "pending" as const };
      if (verdict.kind === "pending") verdict = judgeCompletion(task, await this.host.recentMessages(taskId, RECENT_MESSAGES));
      if (verdict.kind === "completed") this.settle(taskId, "completed", { result: verdict.result });
      if (verdict.kind === "error") this.settle(taskId, "error", { error: verdict.error });
    } catch (error) {
      this.logError(`Could not check task ${taskId}`, error);
    } finally {
      this.checking.delete(taskId);
    }
  }

  /** Commits the settle and its notification together, then tells the parent. False when already settled. */
  private settle(taskId: string, to: TaskStatus, fields: { result?: string; error?: string }): boolean {
    const settled = this.store.transaction(() => {
      const task = this.store.get(taskId);
      if (!task || isSettled(task.status)) return undefined;
      const now = this.clock.now();
      transition(task, to, now);
      Object.assign(task, fields, { progress: this.progress.get(taskId) ?? task.progress });
      this.store.save(task);
      this.store.appendEvent({ taskId, at: now, kind: `status:${to}`, detail: fields.error });
      const siblingsActive = this.activeTasks().some((t) => t.parentSessionID === task.parentSessionID);
      this.notifier.record(task, to === "error" || (to === "completed" && !siblingsActive));
      return task;
    });
    if (!settled) return false;
    this.progress.release(taskId);
    this.answers.release(taskId);
    this.waiters.notifySettled(taskId);
    void this.notifier.deliver(settled.parentSessionID);
    return true;
  }

  private async continueInterrupted(task: Task): Promise<void> {
    const claimed = this.store.transaction(() => {
      const current = this.store.get(task.id);
      if (!current || current.promptedAt !== task.promptedAt || isSettled(current.status)) return undefined;
      current.promptedAt = this.clock.now();
      current.progress.lastActivityAt = current.promptedAt;
      this.store.save(current);
      this.store.appendEvent({ taskId: task.id, at: current.promptedAt, kind: "interrupted", detail: "told to continue" });
      this.notifier.recordNote(current, `interrupted-${current.promptedAt}`, `<background-task-notification task_id="${task.id}" status="${current.status}">\nBackground task "${task.description}" was interrupted by an OpenCode restart and has been told to continue. You will be notified when it finishes.\n</background-task-notification>`);
      return current;
    });
    if (!claimed) return;
    this.progress.release(task.id);
    this.progress.track(task.id, claimed.progress);
    void this.notifier.deliver(claimed.parentSessionID);
    await this.sendPrompt(claimed, CONTINUE_PROMPT).catch((error) => this.logError(`Could not resume interrupted task ${task.id}`, error));
  }

  /** A task with no activity for staleAfterMinutes is failed, unless the session shows recent activity. */
  private async checkStale(task: Task): Promise<void> {
    const staleMs = this.config.staleAfterMinutes * 60_000;
    const progress = this.progress.get(task.id) ?? task.progress;
    const now = this.clock.now();
    if (now - progress.lastActivityAt < staleMs) return;
    const last = (await this.host.recentMessages(task.id, 1)).at(-1);
    const lastSeen = last ? Math.max(last.createdAt, last.completedAt ?? 0) : 0;
    if (now - lastSeen < staleMs) {
      this.progress.recordActivity(task.id, lastSeen);
      return;
    }
    const minutes = this.config.staleAfterMinutes;
    if (this.settle(task.id, "error", { error: `No activity for ${minutes} minute${minutes === 1 ? "" : "s"}: the task was stopped as stuck.` })) {
      await this.host.abort(task.id).catch((error) => this.logError(`Could not abort stuck task ${task.id}`, error));
    }
  }

  private onChildError(taskId: string, name: string, message: string): void {
    if (name === "MessageAbortedError") this.settle(taskId, "cancelled", { error: "The child session was aborted." });
    else this.settle(taskId, "error", { error: message || name });
  }

  private onSessionDeleted(sessionID: string): void {
    if (this.progress.isTracked(sessionID)) this.settle(sessionID, "error", { error: "The child session was deleted." });
    const children = this.store.list({ parentSessionID: sessionID, includeCleared: true });
    if (children.length === 0) return;
    const now = this.clock.now();
    for (const child of children) {
      if (!isSettled(child.status)) void this.cancel(child, "The parent session was deleted.");
    }
    for (const notification of this.store.pendingNotifications(sessionID)) this.store.markDelivered(notification.id, now);
    for (const child of children) this.store.remove(child.id);
    this.notifier.forget(sessionID);
  }

  private async sendPrompt(task: Task, text: string): Promise<void> {
    try {
      await this.host.prompt({ sessionID: task.id, text, agent: task.agent, model: task.model });
    } catch (error) {
      this.settle(task.id, "error", { error: `Could not send the prompt: ${errorMessage(error)}` });
      throw new TaskError(`The child session did not accept the prompt: ${errorMessage(error)}`);
    }
  }

  private async childModel(agentName: string, parentModel?: ModelRef): Promise<ModelRef> {
    const agents = await this.host.agents();
    const agent = agents.find((a) => a.name === agentName);
    if (!agent) {
      throw new TaskError(`Unknown agent "${agentName}". Available agents: ${agents.map((a) => a.name).join(", ")}.`);
    }
    const model = agent.model ?? parentModel;
    if (!model) throw new TaskError(`Agent "${agentName}" has no model of its own and the parent's model is unknown. Pick an agent with a model.`);
    return model;
  }

  private requireForkPreparer(): ForkPreparer {
    if (!this.forkPreparer) throw new TaskError("fork is not available in this build.");
    return this.forkPreparer;
  }

  private requireOne(taskId: string): Task {
    const found = this.lookup(taskId);
    if (found.kind !== "tasks") throw new TaskError(found.message);
    if (found.batchId) throw new TaskError(`"${taskId}" names a batch; resume takes one task id.`);
    return found.tasks[0];
  }

  private isSettledNow(taskId: string): boolean {
    const task = this.store.get(taskId);
    return !task || isSettled(task.status);
  }

  private activeTasks(): Task[] {
    return this.store.list({ statuses: ACTIVE, includeCleared: true });
  }

  private hasWork(): boolean {
    return this.activeTasks().length > 0 || this.notifier.waitingParents().length > 0;
  }

  private saveProgress(taskId: string): void {
    const task = this.store.get(taskId);
    const progress = this.progress.get(taskId);
    if (!task || !progress || isSettled(task.status)) return;
    task.progress = progress;
    this.store.save(task);
  }

  private logError(message: string, error: unknown): void {
    void this.host.log("error", message, { error: errorMessage(error) }).catch(() => undefined);
  }
}

import type { Clock } from "./clock.ts";
import type { Host, HostEvent } from "../host/host.ts";
import type { TaskStore } from "./task-store.ts";
import { isSettled, transition, type ModelRef, type Task, type TaskStatus } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import { TaskError, errorMessage } from "./errors.ts";
import { SettleWaiters, type WaitOutcome } from "./settle-waiters.ts";
import { ParentNotifier } from "./parent-notifier.ts";
import { CoreLog, type CoreContext } from "./core-context.ts";
import { Poller } from "./poller.ts";
import { lookupTasks } from "./task-ids.ts";
import { recoverTasks } from "./recovery.ts";
import { TaskLifecycle, UNSETTLED } from "./task-lifecycle.ts";
import { TaskScheduler } from "./task-scheduler.ts";
import { TaskWatch } from "./task-watch.ts";
import { EventRouter } from "./event-router.ts";
import { StoreHealth, type StoreFailure } from "./store-health.ts";

export type ManagerConfig = {
  pollIntervalMs: number;
  resultCapChars: number;
  idleEvents: boolean;
  onInterrupted: "resume" | "fail";
  staleAfterMinutes: number;
  maxRunSeconds: number;
  maxConcurrentPerModel: number;
  maxConcurrentTotal: number;
  maxDepth: number;
  cancelChildrenOnParentAbort: boolean;
};

export type LaunchInput = {
  parentSessionID: string;
  parentMessageID: string;
  parentAgent: string;
  parentModel?: ModelRef;
  description: string;
  prompt: string;
  agent: string;
  /** Overrides the agent's own model and the parent's. */
  model?: ModelRef;
  /** Default true; false: the core enqueues no parent notification for this task's settles. */
  notify?: boolean;
  /** Data for the hooks (e.g. evidence expectations), passed to `hooks.launched` untouched. */
  extras?: unknown;
};

/** A parent notification put in the outbox by a layer above the core (see `enqueueNotification`). */
export type NotificationInput = { id: string; parentSessionID: string; taskId: string; text: string; wake: boolean };

/**
 * Fork support, given to the manager so the core stays free of fork details: `fork` copies the
 * parent into a new session; `firstPrompt` builds the child's first message (same text every time).
 */
export type ForkSupport = {
  fork(input: LaunchInput & { title: string }): Promise<string>;
  firstPrompt(sessionID: string, prompt: string): Promise<string>;
};

function refuseResume(task: Task): void {
  if (task.status === "resumed") throw new TaskError(`Task ${task.id} is already being resumed; wait for its result with background_output, then resume it again.`);
  if (task.status !== "completed") throw new TaskError(`Task ${task.id} is ${task.status}; only a completed task can be resumed. Start a new background_task instead.`);
}

/** What the tools call: launch, resume, cancel, wait, list, clear. */
export class TaskManager {
  /** The run of each task and its one settle; layers above the core hook in through it (evidence). */
  readonly life: TaskLifecycle;
  private ctx: CoreContext;
  private notifier: ParentNotifier;
  private waiters: SettleWaiters;
  private scheduler: TaskScheduler;
  private watch: TaskWatch;
  private router: EventRouter;
  private poller: Poller;
  private health: StoreHealth;
  private disposed = false;

  /**
   * Owns the shared context and every part, and hands each part what it uses. Parts that react to
   * settles subscribe to `life.events` (nothing is set after construction). Never throws: a store
   * that fails now is logged, and `start` and the poll retry.
   */
  constructor(host: Host, store: TaskStore, clock: Clock, private config: ManagerConfig, private forks?: ForkSupport) {
    this.health = new StoreHealth(clock);
    const ctx: CoreContext = { host, store: this.health.watch(store), clock, log: new CoreLog(host) };
    this.ctx = ctx;
    this.notifier = new ParentNotifier({ host, store: ctx.store, clock, resultCap: config.resultCapChars, onError: (m, e) => ctx.log.error(m, e) });
    this.waiters = new SettleWaiters(clock);
    this.life = new TaskLifecycle(ctx, this.notifier);
    this.life.events.on("settled", (task) => this.waiters.notifySettled(task.id));
    this.life.events.on("settled", (task) => this.notifier.deliver(task.parentSessionID));
    this.scheduler = new TaskScheduler(ctx, this.life, config, (task) => this.firstPrompt(task));
    this.watch = new TaskWatch(ctx, this.life, this.notifier, config);
    this.router = new EventRouter(ctx, this.life, this.notifier, config);
    this.poller = new Poller(clock, config.pollIntervalMs, () => this.poll(), () => this.hasWork(), () => this.logIdle(),
      (message, error) => ctx.log.error(message, error));
  }

  /** Reconciles tasks left by an earlier process, starts queued ones, then polls (and delivers the outbox). */
  async start(): Promise<void> {
    try {
      this.life.trackActive();
      await recoverTasks({ ctx: this.ctx, life: this.life, notifier: this.notifier }, this.config.onInterrupted);
    } catch (error) {
      this.ctx.log.error("Recovering background tasks after a restart failed; polling will retry", error);
    }
    await this.scheduler.startQueued();
    this.poller.ensureRunning();
  }

  /** The last store error while it is recent and no write has succeeded since (shown by background_list). */
  storeFailure(): StoreFailure | undefined {
    return this.health.failure();
  }

  async launch(input: LaunchInput & { fork?: boolean }): Promise<Task> {
    const depth = this.depthOf(input.parentSessionID) + 1;
    if (depth > this.config.maxDepth) {
      throw new TaskError(`This session is already ${depth - 1} level(s) deep in background tasks; the limit is ${this.config.maxDepth} (maxDepth). Do the work here instead of launching another task.`);
    }
    const model = await this.childModel(input.agent, input.model ?? input.parentModel, input.model !== undefined);
    const title = `${input.description} (@${input.agent} background)`;
    const id = input.fork
      ? await this.requireForks().fork({ ...input, title })
      : (await this.ctx.host.createSession({ parentID: input.parentSessionID, title })).id;
    const now = this.ctx.clock.now();
    const task: Task = {
      id, parentSessionID: input.parentSessionID, batchId: input.parentMessageID,
      description: input.description, prompt: input.prompt, agent: input.agent, model,
      parentAgent: input.parentAgent, parentModel: input.parentModel, status: "queued",
      isForked: Boolean(input.fork), resumeCount: 0, ...(input.notify === false ? { notify: false } : {}),
      progress: { toolCalls: 0, lastTools: [], lastActivityAt: now }, createdAt: now, promptedAt: now,
    };
    const { store } = this.ctx;
    // Saved and given a slot in one transaction: "queued" is said only when the task really waits.
    const claimed = store.transaction(() => {
      store.save(task);
      store.appendEvent({ taskId: id, at: now, kind: "launched", detail: input.fork ? "forked" : undefined });
      this.life.callHook("launched", () => this.life.hooks.launched?.(task, input.extras));
      return this.scheduler.claimFitting();
    });
    this.notifier.setActivity(input.parentSessionID, "busy");
    const mine = claimed.find((t) => t.id === id);
    void this.scheduler.startAll(claimed.filter((t) => t !== mine));
    this.poller.ensureRunning();
    if (mine) {
      // This call's answer reports a failed start: the parent is not notified of it as well.
      await this.scheduler.start(mine, { notify: false }).catch((error) => {
        throw new TaskError(`The child session did not start: ${errorMessage(error)}`);
      });
    }
    return store.get(id) ?? { ...task, status: mine ? "running" : "queued" };
  }

  async resume(taskId: string, prompt: string, parentAgent: string, parentModel?: ModelRef): Promise<Task> {
    const found = this.requireOne(taskId);
    refuseResume(found);
    if (!(await this.ctx.host.sessionExists(found.id))) {
      throw new TaskError(`Task ${found.id}'s session no longer exists, so it cannot be resumed. Start a new background_task with the context it needs.`);
    }
    const { store, clock } = this.ctx;
    // Checked again and claimed in one transaction: two resumes in one response never both pass.
    const task = store.transaction(() => {
      const current = store.get(found.id);
      if (!current) throw new TaskError(`Task ${found.id} no longer exists. Start a new background_task.`);
      refuseResume(current);
      const now = clock.now();
      transition(current, "resumed", now);
      Object.assign(current, { promptedAt: now, parentAgent, parentModel: parentModel ?? current.parentModel });
      current.progress.lastActivityAt = now;
      store.save(current);
      store.appendEvent({ taskId: current.id, at: now, kind: "resumed", detail: `resume #${current.resumeCount}` });
      return current;
    });
    this.life.progress.track(task.id, task.progress);
    this.notifier.setActivity(task.parentSessionID, "busy");
    this.poller.ensureRunning();
    await this.life.sendPrompt(task, prompt, { notify: false });
    return store.get(task.id) ?? task;
  }

  /**
   * Calls `listener` after every settle, synchronously inside the settle's store transaction and
   * after the task row is saved: what it writes commits (or rolls back) with the settle. A
   * listener that throws is logged; the settle goes on.
   */
  onSettle(listener: (task: Task) => void): void {
    this.life.events.on("settling", listener);
  }

  /**
   * Puts a notification in the outbox; delivered by the core's notifier (held while the parent is
   * busy, exactly once, with the parent agent and model of task `taskId`). Callable inside an
   * `onSettle` listener: delivery is only attempted after the current synchronous work is done.
   */
  enqueueNotification(input: NotificationInput): void {
    this.ctx.store.enqueueNotification({ ...input, createdAt: this.ctx.clock.now() });
    queueMicrotask(() => {
      this.ctx.log.detach(`Could not notify parent session ${input.parentSessionID}`, this.notifier.deliver(input.parentSessionID));
      this.poller.ensureRunning();
    });
  }

  cancel(task: TaskSummary, reason?: string): Promise<boolean> {
    return this.life.cancel(task, reason);
  }

  /** Waits until every task settles, the timeout passes or the signal aborts. */
  async waitFor(tasks: TaskSummary[], timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    const { clock, store } = this.ctx;
    const waiters = this.waiters;
    const deadline = clock.now() + timeoutMs;
    for (const task of tasks) {
      const settled = () => {
        const current = store.get(task.id);
        return !current || isSettled(current.status);
      };
      const outcome = await waiters.wait(task.id, settled, Math.max(0, deadline - clock.now()), signal);
      if (outcome.timedOut || outcome.aborted) return outcome;
    }
    return { timedOut: false, aborted: false };
  }

  markRetrieved(task: TaskSummary): void {
    const { store, clock } = this.ctx;
    if (!isSettled(task.status) || task.retrievedAt !== undefined) return;
    const stored = store.get(task.id);
    if (!stored) return;
    stored.retrievedAt = clock.now();
    store.save(stored);
    store.appendEvent({ taskId: task.id, at: stored.retrievedAt, kind: "retrieved" });
  }

  /** Hides the parent's settled tasks from its list; returns how many were hidden and which still run. */
  clear(parentSessionID: string): { cleared: number; running: TaskSummary[] } {
    const { store, clock } = this.ctx;
    const tasks = store.list({ parentSessionID });
    const settled = tasks.filter((t) => isSettled(t.status));
    const now = clock.now();
    store.transaction(() => {
      for (const summary of settled) {
        const task = store.get(summary.id);
        if (!task) continue;
        store.save({ ...task, clearedAt: now });
        store.appendEvent({ taskId: task.id, at: now, kind: "cleared" });
      }
    });
    return { cleared: settled.length, running: tasks.filter((t) => !isSettled(t.status)) };
  }

  get(id: string): Task | undefined {
    return this.ctx.store.get(id);
  }

  lookup(id: string) {
    return lookupTasks(id, this.ctx.store.list({ includeCleared: true }));
  }

  listForParent(parentSessionID: string, status?: TaskStatus): TaskSummary[] {
    return this.ctx.store.list({ parentSessionID, statuses: status ? [status] : undefined }).map((t) => this.withLiveProgress(t));
  }

  withLiveProgress<T extends TaskSummary>(task: T): T {
    return { ...task, progress: this.life.progress.get(task.id) ?? task.progress };
  }

  /** Never throws: OpenCode does not await its event hook, so a throw would escape into it. */
  handleEvent(event: HostEvent): void {
    if (this.disposed) return;
    try {
      this.router.handle(event);
    } catch (error) {
      this.ctx.log.error(`Handling a ${event.type} event of session ${event.sessionID} failed`, error);
    }
  }

  /** One status call for every session: settles missed idles, delivers held notifications, enforces limits. */
  async poll(): Promise<void> {
    await this.watch.poll();
    await this.scheduler.startQueued();
  }

  /** Timers, listeners and per-task entries still held; all zero when nothing runs or waits. */
  debugCounts() {
    return {
      pollTimer: this.poller.isRunning() ? 1 : 0,
      waiters: this.waiters.size(),
      trackedTasks: this.life.trackedCount(),
      rememberedSessions: this.notifier.size(),
    };
  }

  /** Logged each time the last task settles and the outbox is empty: every count should be zero. */
  private logIdle(): void {
    this.ctx.log.info("background tasks idle", { ...this.debugCounts() });
  }

  /** Stops every timer (the poll, blocked background_output waits) and ignores further events. */
  dispose(): void {
    this.disposed = true;
    this.poller.stop();
    this.waiters.abortAll();
  }

  private hasWork(): boolean {
    return this.ctx.store.list({ statuses: UNSETTLED, includeCleared: true }).length > 0 || this.notifier.waitingParents().length > 0;
  }

  /** How many background levels deep a session is: 0 for a session that is not a task's child. */
  private depthOf(sessionID: string): number {
    let depth = 0;
    for (let task = this.ctx.store.get(sessionID); task && depth <= this.config.maxDepth; task = this.ctx.store.get(task.parentSessionID)) depth++;
    return depth;
  }

  private firstPrompt(task: Task): Promise<string> {
    return task.isForked ? this.requireForks().firstPrompt(task.id, task.prompt) : Promise.resolve(task.prompt);
  }

  /** The agent's own model, else the parent's; an explicit launch model (`overrides`) wins over both. */
  private async childModel(agentName: string, parentModel: ModelRef | undefined, overrides: boolean): Promise<ModelRef> {
    const agents = await this.ctx.host.agents();
    const agent = agents.find((a) => a.name === agentName);
    if (!agent) throw new TaskError(`Unknown agent "${agentName}". Available agents: ${agents.map((a) => a.name).join(", ")}.`);
    const model = overrides ? parentModel : agent.model ?? parentModel;
    if (!model) throw new TaskError(`Agent "${agentName}" has no model of its own and the parent's model is unknown. Pick an agent with a model.`);
    return model;
  }

  private requireForks(): ForkSupport {
    if (!this.forks) throw new TaskError("fork is not available in this build.");
    return this.forks;
  }

  private requireOne(taskId: string): Task {
    const found = this.lookup(taskId);
    if (found.kind !== "tasks") throw new TaskError(found.message);
    if (found.batchId) throw new TaskError(`"${taskId}" names a batch; resume takes one task id.`);
    const task = this.ctx.store.get(found.tasks[0].id);
    if (!task) throw new TaskError(`Task ${found.tasks[0].id} no longer exists.`);
    return task;
  }
}

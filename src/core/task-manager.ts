import type { Clock } from "./clock.ts";
import { taskTree } from "./nested-tasks.ts";
import type { Host, HostEvent } from "../host/host.ts";
import type { Placement } from "./placement.ts";
import type { SpendSink } from "./spend-sink.ts";
import type { Budget } from "./budget.ts";
import type { TaskStore } from "./task-store.ts";
import { isSettled, UNSETTLED_STATUSES, type ModelRef, type Task, type TaskStatus, type WorktreeRemoval } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import { TaskError } from "./errors.ts";
import { SettleWaiters, type WaitOutcome } from "./settle-waiters.ts";
import { ParentNotifier } from "./parent-notifier.ts";
import { CoreLog, type CoreContext } from "./core-context.ts";
import { Poller } from "./poller.ts";
import { lookupTasks } from "./task-ids.ts";
import { recoverTasks } from "./recovery.ts";
import { TaskLifecycle } from "./task-lifecycle.ts";
import { TaskScheduler } from "./task-scheduler.ts";
import { TaskWatch } from "./task-watch.ts";
import { EventRouter } from "./event-router.ts";
import { StoreHealth, type StoreFailure } from "./store-health.ts";
import { TaskLauncher, firstPromptWith, type ForkSupport, type LaunchInput } from "./task-launcher.ts";
import type { RunningTasks } from "./running-tasks.ts";
import type { TaskHooks } from "./task-hooks.ts";
import { continueAfterCompaction } from "./compaction-continue.ts";
import { LEASES, newClaimer } from "./claims.ts";
import { TaskOwnership } from "./task-ownership.ts";
import { ClaimSweep } from "./claim-sweep.ts";
import { workdirOf, type WorktreeSupport } from "./task-worktree.ts";
import { TaskScopes, WHOLE_PROJECT, type TaskScope } from "./task-scope.ts";

export type { ForkSupport, LaunchInput } from "./task-launcher.ts";
export { WHOLE_PROJECT, type TaskScope } from "./task-scope.ts";

/** The longest a model request waits for its session's abort (a budget stop). */
const ABORT_WAIT_MS = 2_000;

/** How long the poll leaves a failing store alone before trying it again. */
export const STORE_RETRY_MS = 10_000;

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
  /** The budget of a task launched without one (the taskBudget option); absent or false: none. */
  taskBudget?: Budget | false;
};

/** What layers above the core plug in, given at construction. */
export type ManagerParts<Hooks extends TaskHooks = TaskHooks> = {
  /** How a fork is made and first prompted; without it a fork launch is refused. */
  forks?: ForkSupport;
  /**
   * Builds the hooks (evidence, expectations, milestones) on the view of running tasks. Called
   * once, inside the constructor: the view may be kept, but not used before the constructor returns.
   */
  hooks?: (tasks: RunningTasks) => Hooks;
  /** Other OpenCode servers (workers) that may run children; `host` must then route by session. */
  placement?: Placement;
  /** Counts what children's model requests cost (src/cost/task-spend.ts); none: spend is not recorded. */
  spend?: SpendSink;
  /** This plugin instance's name in outbox claims (core/claims.ts newClaimer); a fresh one by default. */
  claimer?: string;
  /** The git side of isolation "worktree"; none: it is refused. */
  worktrees?: WorktreeSupport;
  /** How long a running task's claim keeps other processes out without a renewal; default LEASES.taskMs (tests shorten it). */
  taskLeaseMs?: number;
};

/** A parent notification put in the outbox by a layer above the core (see `enqueueNotification`). */
export type NotificationInput = { id: string; parentSessionID: string; taskId: string; text: string; visible?: string; wake: boolean; agent?: string; model?: ModelRef };

/** What the tools call: launch, resume, cancel, wait, list, clear. */
export class TaskManager<Hooks extends TaskHooks = TaskHooks> {
  /** The run of each task and its one settle; layers above the core hook in through it (evidence). */
  readonly life: TaskLifecycle;
  /** The hooks built by `parts.hooks` (the composition root gets its evidence service here); none: `{}`. */
  readonly hooks: Hooks;
  /** The git side of isolation (a layer above makes a worktree before a launch: an automation run's steps). */
  readonly worktrees?: WorktreeSupport;
  private ctx: CoreContext;
  private notifier: ParentNotifier;
  private waiters: SettleWaiters;
  private scheduler: TaskScheduler;
  private launcher: TaskLauncher;
  private watch: TaskWatch;
  private router: EventRouter;
  private poller: Poller;
  private health: StoreHealth;
  /** Renews this instance's claims and takes over what gone holders left; the automation layer adds its runs (`onSweep`). */
  private sweep: ClaimSweep;
  private scopes: TaskScopes;
  private disposed = false;

  /**
   * Owns the shared context and every part, and hands each part what it uses. Parts that react to
   * settles subscribe to `life.events`, and the hooks are built here (nothing is set after
   * construction). Never throws: a store that fails now is logged, and `start` and the poll retry.
   */
  constructor(host: Host, store: TaskStore, clock: Clock, private config: ManagerConfig, { forks, hooks, placement, claimer = newClaimer(), spend, worktrees, taskLeaseMs = LEASES.taskMs }: ManagerParts<Hooks> = {}) {
    this.health = new StoreHealth(clock);
    const ctx: CoreContext = { host, store: this.health.watch(store), clock, log: new CoreLog(host), spend, worktrees };
    this.ctx = ctx;
    this.scopes = new TaskScopes(host, ctx.store, (message, error) => ctx.log.error(message, error));
    this.worktrees = worktrees;
    this.notifier = new ParentNotifier({ host, store: ctx.store, clock, resultCap: config.resultCapChars, onError: (m, e) => ctx.log.error(m, e), claimer });
    this.waiters = new SettleWaiters(clock);
    this.hooks = hooks?.(this.runningTasks()) ?? ({} as Hooks);
    this.life = new TaskLifecycle(ctx, this.notifier, this.hooks, new TaskOwnership(ctx, claimer, taskLeaseMs));
    this.sweep = new ClaimSweep(clock, Math.max(1, Math.floor(taskLeaseMs / 3)), (message, error) => ctx.log.error(message, error));
    this.sweep.add(() => this.sweepTasks());
    this.life.events.on("settled", (task) => this.waiters.notifySettled(task.id));
    this.life.events.on("settled", (task) => this.notifier.deliver(task.parentSessionID));
    this.scheduler = new TaskScheduler(ctx, this.life, config, firstPromptWith(forks), placement && ((worker) => placement.capacity(worker)));
    this.watch = new TaskWatch(ctx, this.life, this.notifier, config);
    this.router = new EventRouter(ctx, this.life, this.notifier, config);
    this.poller = new Poller(clock, config.pollIntervalMs, () => this.poll(), () => this.hasWork(), () => this.logIdle(),
      (message, error) => ctx.log.error(message, error));
    const parts = { ctx, life: this.life, notifier: this.notifier, scheduler: this.scheduler, placement, polling: () => this.poller.ensureRunning() };
    this.launcher = new TaskLauncher(parts, config, forks);
  }

  /** Reconciles tasks left by an earlier process, starts queued ones, then polls (and delivers the outbox). */
  async start(): Promise<void> {
    try {
      this.life.trackActive();
      await recoverTasks(this.recoveryParts(), this.config.onInterrupted);
    } catch (error) {
      this.ctx.log.error("Recovering background tasks after a restart failed; polling will retry", error);
    }
    await this.scheduler.startQueued();
    this.poller.ensureRunning();
    this.sweep.start();
  }

  /**
   * Adds a step to the claim sweep (every third of the task lease, in every live process): the
   * automation layer renews its runs and ends the ones a gone process stranded there.
   */
  onSweep(step: () => void | Promise<void>): void {
    this.sweep.add(step);
  }

  private recoveryParts() {
    return { ctx: this.ctx, life: this.life, notifier: this.notifier, start: (task: Task) => this.scheduler.start(task) };
  }

  /** One claim sweep now (tests; the timer runs it every third of the lease). */
  sweepNow(): Promise<void> {
    return this.sweep.runOnce();
  }

  /**
   * Renews the tasks this instance drives (one it lost is no longer followed here) and takes over
   * the running tasks whose owner is gone or out of lease, as a restart would.
   */
  private async sweepTasks(): Promise<void> {
    if (this.disposed) return;
    const { ownership } = this.life;
    for (const id of ownership.renew()) this.life.forget(id);
    const orphans = new Set(ownership.orphans(this.life.activeTasks()).map((t) => t.id));
    if (orphans.size === 0) return;
    await recoverTasks(this.recoveryParts(), this.config.onInterrupted, (t) => orphans.has(t.id));
    this.poller.ensureRunning();
  }

  /**
   * Brings the running tasks `which` selects in line with their host, as after a restart: used
   * when a worker answers again (a child its restart cut off is told to continue, or failed).
   */
  async recover(which: (task: Task) => boolean): Promise<void> {
    await recoverTasks(this.recoveryParts(), this.config.onInterrupted, which);
  }

  /** The last store error while it is recent and no write has succeeded since (shown by background_list). */
  storeFailure(): StoreFailure | undefined {
    return this.health.failure();
  }

  launch(input: LaunchInput & { fork?: boolean }): Promise<Task> {
    return this.launcher.launch(input);
  }

  /** `scope`: whose tasks `taskId` may name (a tool call passes its caller's, see `scopeOf`). */
  resume(taskId: string, prompt: string, parentAgent: string, parentModel?: ModelRef, budget?: Budget, scope: TaskScope = WHOLE_PROJECT): Promise<Task> {
    return this.launcher.resume(this.find(taskId, scope), prompt, parentAgent, parentModel, budget);
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

  /** The narrow view of running tasks that layers above the core (evidence) work through. */
  runningTasks(): RunningTasks {
    // Read at each call, not now: the hooks are built on this view before `life` exists.
    const life = () => this.life;
    const { notifier, ctx } = this;
    return {
      isRunning: (taskId) => life().progress.isTracked(taskId),
      get: (taskId) => ctx.store.get(taskId),
      directoryOf: (taskId) => workdirOf(ctx.store, taskId),
      stop: (taskId, error) => {
        if (!life().settle(taskId, "error", { error })) return false;
        ctx.log.detach(`Could not abort task ${taskId}`, ctx.host.abort(taskId));
        return true;
      },
      setProgressNote: (taskId, note) => life().progress.setNote(taskId, note),
      notifyParent: (task, key, text, visible) => {
        notifier.recordNote(task, key, text, visible);
        // After the caller's transaction (a settle may be recording this), never inside it.
        queueMicrotask(() => ctx.log.detach("Could not deliver a parent notice", notifier.deliver(task.parentSessionID)));
      },
    };
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

  /** Records what became of a task's own worktree (merged, discarded, removed when cleared), with a line in its history. */
  recordWorktreeRemoval(taskId: string, removal: WorktreeRemoval): void {
    const { store } = this.ctx;
    store.transaction(() => {
      const task = store.get(taskId);
      if (!task?.worktree) return;
      store.save({ ...task, worktree: { ...task.worktree, removed: removal } });
      const kept = removal.branchKept ? `, branch ${task.worktree.branch} kept` : "";
      store.appendEvent({ taskId, at: removal.at, kind: "worktree-removed", detail: `by ${removal.by}${kept}` });
    });
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

  /** Tasks whose child works now (running or resumed). */
  activeTasks(): TaskSummary[] {
    return this.life.activeTasks();
  }

  get(id: string): Task | undefined {
    return this.ctx.store.get(id);
  }

  /**
   * Awaited by the host before each model request. A step's spend is known only when it ends,
   * after its tool calls, and the next request follows within milliseconds: the child of a task
   * stopped at its budget is aborted here, before that request goes out.
   */
  async beforeModelRequest(sessionID: string): Promise<void> {
    if (!this.life.halted.has(sessionID)) return;
    const { clock, host, log } = this.ctx;
    let timer: unknown;
    const gaveUp = new Promise<void>((resolve) => (timer = clock.setTimeout(resolve, ABORT_WAIT_MS)));
    await Promise.race([host.abort(sessionID).catch((error) => log.error(`Could not abort child session ${sessionID}`, error)), gaveUp]);
    clock.clearTimeout(timer);
  }

  /** Whether the host should prompt a compacted session to go on (see compaction-continue.ts). */
  continueAfterCompaction(sessionID: string): Promise<boolean> {
    return continueAfterCompaction(this.ctx.store.get(sessionID), this.ctx.host);
  }

  /**
   * The one rule for which tasks a tool call may name: a background child (or an OpenCode subagent
   * session under one) only the tasks below its own; the user's session all. Every tool asks it.
   */
  scopeOf(callerSessionID: string): Promise<TaskScope> {
    return this.scopes.scopeOf(callerSessionID);
  }

  /** The same without waiting for the host, when what is remembered decides it; else undefined. */
  knownScope(callerSessionID: string): TaskScope | undefined {
    return this.scopes.known(callerSessionID);
  }

  /** The tasks `id` names among those `scope` sees: one outside it answers as an unknown id. */
  lookup(id: string, scope: TaskScope) {
    return lookupTasks(id, this.ctx.store.list({ includeCleared: true }).filter((t) => scope.sees(t)));
  }

  /** The sessions whose launches a caller lists and clears: its own and, for a subagent session, its task's. */
  launchersFor(callerSessionID: string, scope: TaskScope): string[] {
    return scope.owner && scope.owner !== callerSessionID ? [callerSessionID, scope.owner] : [callerSessionID];
  }

  /** The taskBudget option: what a task launched without a budget gets. */
  defaultBudget(): Budget | undefined {
    return this.config.taskBudget || undefined;
  }

  /** What the task tree (with the budgets above it) may still spend; undefined: no budget limits it. */
  budgetLeft(taskId: string): Budget | undefined {
    return this.ctx.spend?.left?.(taskId);
  }

  listForParent(parentSessionID: string, status?: TaskStatus): TaskSummary[] {
    return this.ctx.store.list({ parentSessionID, statuses: status ? [status] : undefined }).map((t) => this.withLiveProgress(t));
  }

  /** The tasks a task's child launched, and theirs, in tree order with their depth (1: its own). */
  tasksBelow(taskId: string): { task: TaskSummary; depth: number }[] {
    return taskTree(this.ctx.store, taskId).map(({ task, depth }) => ({ task: this.withLiveProgress(task), depth }));
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
    if (this.disposed) return;
    // Each write to a locked database blocks OpenCode for the busy timeout: a failing store is
    // tried again after a pause, not on every poll.
    const failure = this.health.failure();
    if (failure && this.ctx.clock.now() - failure.at < STORE_RETRY_MS) return;
    await this.watch.poll();
    if (!this.disposed) await this.scheduler.startQueued();
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
    this.sweep.stop();
    try {
      // Free at once for the other processes: this instance drives nothing from now on.
      this.life.ownership.releaseAll();
    } catch (error) {
      this.ctx.log.error("Could not let go of the running tasks; other processes take them over when the lease ends", error);
    }
    this.waiters.abortAll();
  }

  private hasWork(): boolean {
    return this.ctx.store.list({ statuses: UNSETTLED_STATUSES, includeCleared: true }).length > 0 || this.notifier.waitingParents().length > 0;
  }

  /** The one task `taskId` names among those `scope` sees; else a refusal (an unknown id, a batch). */
  find(taskId: string, scope: TaskScope): Task {
    const found = this.lookup(taskId, scope);
    if (found.kind !== "tasks") throw new TaskError(found.message);
    if (found.batchId) throw new TaskError(`"${taskId}" names a batch; resume takes one task id.`);
    const task = this.ctx.store.get(found.tasks[0].id);
    if (!task) throw new TaskError(`Task ${found.tasks[0].id} no longer exists.`);
    return task;
  }
}

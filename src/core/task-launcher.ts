import { transition, type ModelRef, type Task, type TaskWorktree } from "./task.ts";
import { workdirOf, type WorktreeBase } from "./task-worktree.ts";
import { TaskError, errorMessage } from "./errors.ts";
import type { CoreContext } from "./core-context.ts";
import type { ParentNotifier } from "./parent-notifier.ts";
import type { TaskLifecycle } from "./task-lifecycle.ts";
import type { FirstPrompt, TaskScheduler } from "./task-scheduler.ts";
import type { Choice, Placement } from "./placement.ts";
import { isBudgetStop, parseBudget, type Budget } from "./budget.ts";

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
  /** Where the child runs: a worker's name, "local" (the default) or "auto". */
  worker?: string;
  /** "worktree": the child works in a new git worktree of the project's HEAD (src/worktrees); default "none". */
  isolation?: "worktree" | "none";
  /** With isolation "worktree": the commit it starts from; default "head". */
  worktreeBase?: WorktreeBase;
  /**
   * With isolation "worktree": a worktree the caller made already (an automation run's steps ran
   * there); the task takes it as its own. A failed launch leaves it to the caller.
   */
  worktree?: TaskWorktree;
  /** The task tree's spending limit; absent: the taskBudget option's, else none. */
  budget?: Budget;
  /**
   * Called inside the transaction that saves the new task, before it can start or settle: a layer
   * above links its own row to the task there (an automation run's task_id), so a settle always finds it.
   */
  onSaved?: (task: Task) => void;
};

/**
 * Fork support, given to the manager so the core stays free of fork details: `fork` copies the
 * parent into a new session; `firstPrompt` builds the child's first message (same text every time).
 */
export type ForkSupport = {
  fork(input: LaunchInput & { title: string; directory?: string }): Promise<string>;
  firstPrompt(sessionID: string, prompt: string): Promise<string>;
};

/** The text a task's child is first prompted with: a fork's carries its preamble. */
export function firstPromptWith(forks: ForkSupport | undefined): FirstPrompt {
  return (task) => (task.isForked ? requireForks(forks).firstPrompt(task.id, task.prompt) : Promise.resolve(task.prompt));
}

type LauncherParts = {
  ctx: CoreContext;
  /** Other OpenCode servers that may run the child; without it every child runs here. */
  placement?: Placement;
  life: TaskLifecycle;
  notifier: ParentNotifier;
  scheduler: TaskScheduler;
  /** Called once a task may need polling (the manager's poller). */
  polling: () => void;
};

/**
 * Starts work: a new task (fresh or forked) and a resume of a completed one. Like a settle, each
 * reads, checks and writes its task in one store transaction, so calls made at the same moment
 * (OpenCode runs one response's tool calls concurrently) never both pass a check.
 */
export class TaskLauncher {
  private localLimits: { perModel: number; total: number };

  constructor(
    private parts: LauncherParts,
    private config: { maxDepth: number; maxConcurrentPerModel: number; maxConcurrentTotal: number; taskBudget?: Budget | false },
    private forks?: ForkSupport,
  ) {
    this.localLimits = { perModel: config.maxConcurrentPerModel, total: config.maxConcurrentTotal };
  }

  async launch(input: LaunchInput & { fork?: boolean }): Promise<Task> {
    if (input.budget) checkBudget(input.budget);
    this.refuseWhenDailyBudgetReached();
    const depth = this.depthOf(input.parentSessionID) + 1;
    if (depth > this.config.maxDepth) {
      throw new TaskError(`This session is already ${depth - 1} level(s) deep in background tasks; the limit is ${this.config.maxDepth} (maxDepth). Do the work here instead of launching another task.`);
    }
    const model = await this.childModel(input.agent, input.model ?? input.parentModel, input.model !== undefined);
    const choice = this.choose(input.isolation === "worktree" ? isolatedWorker(input.worker) : input.worker, model);
    try {
      return await this.launchOn(choice.worker, input, model);
    } finally {
      choice.release();
    }
  }

  private async launchOn(worker: string | undefined, input: LaunchInput & { fork?: boolean }, model: ModelRef): Promise<Task> {
    const { ctx, life, notifier, scheduler } = this.parts;
    const title = `${input.description} (@${input.agent} background)`;
    const place = await this.workplace(worker, input);
    const id = await this.createChild(worker, input, title, place).catch(async (error) => {
      if (place.own && !input.worktree) await ctx.worktrees?.remove(place.own).catch((e) => ctx.log.error("Could not remove the worktree of a child that was not created", e));
      throw error;
    });
    const worktree = place.own && await this.nameBranch(place.own, id, input.description);
    const now = ctx.clock.now();
    const task: Task = {
      id, parentSessionID: input.parentSessionID, batchId: input.parentMessageID,
      description: input.description, prompt: input.prompt, agent: input.agent, model,
      parentAgent: input.parentAgent, parentModel: input.parentModel, status: "queued",
      isForked: Boolean(input.fork), resumeCount: 0, ...(input.notify === false ? { notify: false } : {}),
      progress: { toolCalls: 0, lastTools: [], lastActivityAt: now }, createdAt: now, promptedAt: now,
      ...(worker ? { worker } : {}), ...budgetOf(input.budget ?? (this.config.taskBudget || undefined)),
      ...(worktree ? { worktree } : {}),
    };
    const { store } = ctx;
    // Saved and given a slot in one transaction: "queued" is said only when the task really waits.
    const claimed = store.transaction(() => {
      store.save(task);
      input.onSaved?.(task);
      store.appendEvent({ taskId: id, at: now, kind: "launched", detail: input.fork ? "forked" : undefined });
      life.callHook("launched", () => life.hooks.launched?.(task, input.extras));
      return scheduler.claimFitting();
    });
    ctx.spend?.launched?.(task);
    // A launch from a tool call is inside the parent's turn; one from a layer above (an automation
    // run, notify false) is not, and must not hold the parent's notifications until the next poll.
    if (input.notify !== false) notifier.setActivity(input.parentSessionID, "busy");
    const mine = claimed.find((t) => t.id === id);
    ctx.log.detach("Could not start queued background tasks", scheduler.startAll(claimed.filter((t) => t !== mine)));
    this.parts.polling();
    if (mine) {
      // This call's answer reports a failed start: the parent is not notified of it as well.
      await scheduler.start(mine, { notify: false }).catch((error) => {
        throw new TaskError(`The child session did not start: ${errorMessage(error)}`);
      });
    }
    return store.get(id) ?? { ...task, status: mine ? "running" : "queued" };
  }

  /** Where the child goes: a worker (by name, or "auto" when this OpenCode's slots are full) or here. */
  private choose(requested: string | undefined, model: ModelRef): Choice {
    const placement = this.parts.placement;
    const wanted = requested?.trim() || "local";
    if (placement) {
      const waiting = this.parts.ctx.store.list({ statuses: ["queued"], includeCleared: true });
      return placement.choose(wanted, model, this.parts.life.activeTasks(), this.localLimits, waiting);
    }
    if (wanted !== "local" && wanted !== "auto") throw new TaskError(`No worker "${wanted}": no workers are configured (plugin option "workers"). Leave out worker, or use "local".`);
    return { release: () => {} };
  }

  /** The child's session, where it will run: a fork copies the parent's messages (onto a worker, by the placement). */
  private async createChild(worker: string | undefined, input: LaunchInput & { fork?: boolean }, title: string, place: Workplace): Promise<string> {
    const { ctx, placement } = this.parts;
    if (worker && placement) return input.fork ? placement.fork(worker, { ...input, title }) : (await placement.createSession(worker, title)).id;
    // A fork of a session in a worktree (a nested task) lands there by itself; into a new worktree it needs the directory.
    if (input.fork) return requireForks(this.forks).fork({ ...input, title, ...(place.own ? { directory: place.directory } : {}) });
    return (await ctx.host.createSession({ parentID: input.parentSessionID, title, directory: place.directory })).id;
  }

  /**
   * Where a local child works: in the worktree of the task that launches it (a nested task shares
   * it), in a new worktree of its own (isolation "worktree"), or in the project's checkout.
   */
  private async workplace(worker: string | undefined, input: LaunchInput): Promise<Workplace> {
    if (worker) return {};
    const { ctx } = this.parts;
    const inherited = workdirOf(ctx.store, input.parentSessionID);
    if (inherited) return { directory: inherited };
    if (input.isolation !== "worktree") return {};
    if (input.worktree) return { own: input.worktree, directory: input.worktree.workdir ?? input.worktree.path };
    if (!ctx.worktrees) throw new TaskError('isolation "worktree" is not available in this build. Leave out isolation.');
    const own = await ctx.worktrees.create(input.description, input.worktreeBase ?? "head");
    return { own, directory: own.workdir ?? own.path };
  }

  /** A branch that cannot be renamed keeps its first name: the child works all the same. */
  private async nameBranch(worktree: TaskWorktree, taskId: string, description: string): Promise<TaskWorktree> {
    const { ctx } = this.parts;
    return ctx.worktrees!.name(worktree, taskId, description).catch((error) => {
      ctx.log.error(`Could not name the branch of task ${taskId}; it keeps ${worktree.branch}`, error);
      return worktree;
    });
  }

  /** `budget`: the task tree's new limit, counted against everything it has spent so far. */
  async resume(found: Task, prompt: string, parentAgent: string, parentModel?: ModelRef, budget?: Budget): Promise<Task> {
    const { ctx, life, notifier } = this.parts;
    if (budget) checkBudget(budget);
    refuseResume(found, budget);
    this.refuseWhenDailyBudgetReached();
    const passed = budget && ctx.spend?.passed?.(found.id, budget);
    if (passed) throw new TaskError(`Task ${found.id} has already spent more than that budget (${passed.replace(/^budget_exceeded: /, "")}), counted with its descendants. Ask the user whether to resume it with a larger budget.`);
    if (found.worktree?.removed) {
      throw new TaskError(`Task ${found.id}'s worktree was removed (by ${found.worktree.removed.by}), so it cannot be resumed. Start a new background_task; with isolation "worktree" it starts from the current HEAD.`);
    }
    if (!(await ctx.host.sessionExists(found.id))) {
      throw new TaskError(`Task ${found.id}'s session no longer exists, so it cannot be resumed. Start a new background_task with the context it needs.`);
    }
    const { store, clock } = ctx;
    // Checked again and claimed in one transaction: two resumes in one response never both pass.
    const task = store.transaction(() => {
      const current = store.get(found.id);
      if (!current) throw new TaskError(`Task ${found.id} no longer exists. Start a new background_task.`);
      refuseResume(current, budget);
      const now = clock.now();
      transition(current, "resumed", now);
      if (budget) current.budget = { ...budget };
      Object.assign(current, { promptedAt: now, parentAgent, parentModel: parentModel ?? current.parentModel });
      current.progress.lastActivityAt = now;
      store.save(current);
      life.ownership.take(current.id); // the instance that resumes a child drives it
      store.appendEvent({ taskId: current.id, at: now, kind: "resumed", detail: `resume #${current.resumeCount}` });
      return current;
    });
    if (budget) ctx.spend?.budgetChanged?.(task.id);
    life.halted.delete(task.id);
    life.progress.track(task.id, task.progress);
    if (task.notify !== false) notifier.setActivity(task.parentSessionID, "busy");
    this.parts.polling();
    await life.sendPrompt(task, prompt, { notify: false });
    return store.get(task.id) ?? task;
  }

  /** dailyBudgetUsd reached: no new background work (queued tasks wait, running ones go on). */
  private refuseWhenDailyBudgetReached(): void {
    const refusal = this.parts.ctx.spend?.refusal?.();
    if (refusal) throw new TaskError(refusal);
  }

  /** How many background levels deep a session is: 0 for a session that is not a task's child. */
  private depthOf(sessionID: string): number {
    const { store } = this.parts.ctx;
    let depth = 0;
    for (let task = store.get(sessionID); task && depth <= this.config.maxDepth; task = store.get(task.parentSessionID)) depth++;
    return depth;
  }

  /** The agent's own model, else the parent's; an explicit launch model (`overrides`) wins over both. */
  private async childModel(agentName: string, parentModel: ModelRef | undefined, overrides: boolean): Promise<ModelRef> {
    const agents = await this.parts.ctx.host.agents();
    const agent = agents.find((a) => a.name === agentName);
    if (!agent) throw new TaskError(`Unknown agent "${agentName}". Available agents: ${agents.map((a) => a.name).join(", ")}.`);
    const model = overrides ? parentModel : agent.model ?? parentModel;
    if (!model) throw new TaskError(`Agent "${agentName}" has no model of its own and the parent's model is unknown. Pick an agent with a model.`);
    return model;
  }
}

/** Where a local child works: `own`, a worktree made for it; `directory`, its own or its launcher's worktree. */
type Workplace = { own?: TaskWorktree; directory?: string };

/** An isolated child works in a worktree of this machine's checkout: never on a worker. */
function isolatedWorker(worker: string | undefined): string {
  const wanted = worker?.trim() || "local";
  if (wanted === "local" || wanted === "auto") return "local";
  throw new TaskError(`isolation "worktree" makes a git worktree on this machine, so its child cannot run on worker "${wanted}". Leave out worker, or leave out isolation.`);
}

/** Why `task` cannot be resumed (with `budget`), thrown; checked again when the resume claims it. */
export function refuseResume(task: Task, budget: Budget | undefined): void {
  if (task.status === "resumed") throw new TaskError(`Task ${task.id} is already being resumed; wait for its result with background_output, then resume it again.`);
  if (task.status === "error" && isBudgetStop(task.error)) {
    if (!budget) throw new TaskError(`Task ${task.id} stopped at its budget (${task.error}). The user decides whether it goes on: ask them whether to resume it with a larger budget (a larger one asks them too).`);
    return;
  }
  if (task.status !== "completed") throw new TaskError(`Task ${task.id} is ${task.status}; only a completed task can be resumed. Start a new background_task instead.`);
}

function checkBudget(budget: Budget): void {
  const { problem } = parseBudget(budget, "budget");
  if (problem) throw new TaskError(problem);
}

function budgetOf(budget: Budget | undefined): { budget?: Budget } {
  return budget ? { budget: { ...budget } } : {};
}

function requireForks(forks: ForkSupport | undefined): ForkSupport {
  if (!forks) throw new TaskError("fork is not available in this build.");
  return forks;
}

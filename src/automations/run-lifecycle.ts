import { AutomationRefusal } from "../core/errors.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import type { Task } from "../core/task.ts";
import { parseRunName, type Automation, type Run, type Trigger } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import { AutomationScheduler } from "./automation-scheduler.ts";
import { firstLine } from "./automation-text.ts";
import { RunRecorder, type RunNotice } from "./run-recorder.ts";
import { RunStarter } from "./run-starter.ts";
import { AutomationSpending } from "./automation-spending.ts";
import type { EventSources } from "../triggers/event-sources.ts";
import type { FireResult } from "../triggers/source-loaders.ts";
import type { RunDay } from "../store/run-history-fold.ts";
import type { TriggerEvent } from "../triggers/trigger-source.ts";

/** An event's data in a run's prompt: at most this many characters. */
const EVENT_DATA_CAP = 8192;

/** What the event triggers' sources call: fire a run, record a skip, end a run a crash cut off. */
export type RunIntake = Pick<RunLifecycle, "fireEvent" | "recordSkip" | "abandonRun">;

export type RunLifecycleParts = {
  /** Builds the event triggers' sources around what they fire; absent: no event triggers run in this process. */
  eventSources?: (intake: RunIntake) => EventSources;
  /** A notice for the report-to session whatever the notify policy (discovery: the proposals its run made). */
  extraNotice?: (a: Automation, run: Run) => RunNotice | undefined;
};

/**
 * Runs, from firing to end: the scheduler and the event sources fire them, the starter admits
 * and launches them, the recorder ends them (hearing the core's settles). Every status change
 * goes through the run state machine (run-status.ts).
 */
export class RunLifecycle {
  readonly recorder: RunRecorder;
  readonly starter: RunStarter;
  readonly scheduler: AutomationScheduler;
  /** What runs spent, and the daily budgets that skip firings. */
  readonly spending: AutomationSpending;
  /** Event triggers' sources (watchers, pollers, the webhook listener). */
  readonly sources: EventSources | undefined;
  private lastPurge = 0;
  private stopped = false;
  private sweeping = false;

  constructor(private ctx: AutomationContext, parts: RunLifecycleParts = {}) {
    this.recorder = new RunRecorder(ctx, {
      onRunEnded: (id) => this.runEnded(id),
      stepsRunning: (run) => this.starter.steps.running(run),
      extraNotice: parts.extraNotice,
    });
    this.spending = new AutomationSpending(ctx);
    this.starter = new RunStarter(ctx, this.recorder, this.spending);
    this.scheduler = new AutomationScheduler(ctx, this.starter, () => this.afterWake());
    this.sources = parts.eventSources?.(this);
    ctx.manager.onSettle((task) => this.recorder.onTaskSettled(task));
  }

  /** Call once the core has started (its recovery may settle runs): ends runs cut off by a crash, then schedules. */
  start(): void {
    if (!this.sweeping) this.ctx.manager.onSweep(() => this.sweepRuns());
    this.sweeping = true;
    this.recoverRuns();
    this.scheduler.start();
    this.sources?.sync();
  }

  stop(): void {
    this.stopped = true;
    this.starter.steps.stop();
    this.scheduler.stop();
    void this.sources?.stop();
  }

  /** After any change to automations, triggers or runs: the timer and the event sources follow. */
  changed(): void {
    this.scheduler.rearm();
    this.sources?.sync();
  }

  /**
   * An event trigger's source reports something: one run (or, while one is going, the one
   * waiting or skipped row it folds into). Undefined when its automation may not fire now.
   */
  fireEvent(triggerId: string, event: TriggerEvent): FireResult | undefined {
    const { store } = this.ctx;
    const run = store.transaction(() => {
      const trigger = store.trigger(triggerId);
      const a = trigger && store.automation(trigger.automationId);
      if (!trigger || !a || !a.enabled || a.doneAt !== undefined) return undefined;
      const summary = firstLine(maskSecrets(event.summary), 300) + (event.caughtUp ? " (caught up: it happened while no OpenCode process was watching)" : "");
      const data = event.data === undefined ? undefined : capText(maskSecrets(event.data), EVENT_DATA_CAP);
      return this.starter.admit(a, { triggerId, firedBy: trigger.spec.kind as Run["firedBy"], event: { summary, data, key: event.key } });
    });
    if (!run) return undefined;
    this.changed();
    const launched = run.status === "starting" ? this.starter.launch(run) : Promise.resolve();
    return { runId: run.id, launched };
  }

  /** A history row for an event that did not run (e.g. a webhook delivery that expired while no process ran). */
  recordSkip(triggerId: string, summary: string, reason: string): void {
    const { store, clock } = this.ctx;
    const trigger = store.trigger(triggerId);
    if (!trigger) return;
    this.ctx.runs.skip({
      automationId: trigger.automationId, triggerId, firedBy: trigger.spec.kind as Run["firedBy"], status: "skipped",
      skipReason: reason, createdAt: clock.now(), eventSummary: summary,
    });
  }

  /** A run that a crash cut off before it launched; its event is fired again, so this one is only history. */
  abandonRun(runId: number): void {
    const { store, clock } = this.ctx;
    store.transaction(() => {
      const run = store.run(runId);
      if (run?.status !== "starting" || run.taskId !== undefined) return;
      this.ctx.runs.move(runId, "skipped", { skipReason: "interrupted", endedAt: clock.now(), summary: "OpenCode stopped before the run launched; the event was fired again", eventKey: undefined });
    });
  }

  /** task_run: a run of the automation now, whatever its triggers (the overlap policy still applies). */
  async runNow(automationId: string): Promise<{ run: Run; task?: Task }> {
    const { store } = this.ctx;
    const run = store.transaction(() => {
      const a = store.automation(automationId);
      if (!a) throw new AutomationRefusal(`No automation "${automationId}" in this project. task_list shows their ids.`);
      if (a.proposal) throw new AutomationRefusal(`${a.id} "${a.title}" is a proposal: it runs once the user approves it (task_update { id, enabled: true }).`);
      if (a.doneAt !== undefined) throw new AutomationRefusal(`Automation ${a.id} is done (max_runs ${a.maxRuns} reached). Raise max_runs with task_update to run it again.`);
      return this.starter.admit(a, { firedBy: "manual" })!;
    });
    if (run.status !== "starting") return { run };
    return this.starter.launch(run);
  }

  /**
   * background_cancel and the dashboard, given a run's name (`auto_<automation>_<run>`, also its
   * task's batch id): kills the running step of a run in its steps phase. Undefined when the name
   * names no such run.
   */
  async cancelSteps(runName: string): Promise<string | undefined> {
    const run = this.namedRun(runName);
    if (!run || run.status !== "running" || run.taskId !== undefined || run.stepsBy === undefined) return undefined;
    if (await this.starter.steps.cancel(run.id)) {
      const ended = this.ctx.store.run(run.id);
      return `${runName}: ${ended?.status === "cancelled" ? "cancelled; its running step was killed" : `ended ${ended?.status ?? "?"}`}.`;
    }
    return `${runName}: its steps run in another OpenCode process (${run.stepsBy}); cancel it there.`;
  }

  /** Whether this process runs the steps of the named run (a dashboard cancel is its to apply). */
  runsStepsOf(runName: string): boolean {
    const run = this.namedRun(runName);
    return !!run && run.taskId === undefined && run.stepsBy === this.starter.steps.holder;
  }

  /** Newest first. */
  runs(automationId: string, limit: number): Run[] {
    return this.ctx.store.runs(automationId, limit);
  }

  /** Older quiet runs folded by UTC day (option historyRuns), newest first. */
  runDays(automationId: string, limit: number): RunDay[] {
    return this.ctx.store.runDays(automationId, limit);
  }

  /** Where a run's notice went outside OpenCode, one line per channel. */
  channelLines(runId: number): string[] {
    return this.ctx.channels?.statusLines(runId) ?? [];
  }

  /** Webhook deliveries stored for the trigger and not yet fired. */
  waitingDeliveries(trigger: Trigger): number {
    return trigger.spec.kind === "webhook" && this.sources ? this.sources.store.waitingDeliveries(trigger.id) : 0;
  }

  /** The run a user-facing run name (`auto_<automation>_<run>`) names: a name typed by a person, not a link. */
  private namedRun(runName: string): Run | undefined {
    const named = parseRunName(runName.trim());
    return named && this.ctx.store.runByNumber(named.automationId, named.runNo);
  }

  private runEnded(automationId: string): void {
    if (this.stopped) return;
    this.starter.startWaiting(automationId);
    this.changed();
  }

  private afterWake(): void {
    this.purgeHourly();
    // Another process may have added event triggers: a process that had none holds no tick of its
    // own, so without this it would never run their sources, nor take them over when that process dies.
    this.sources?.sync();
  }

  /** Retention: old history rows go at start and then at most once an hour. */
  private purgeHourly(): void {
    const { clock, store, config } = this.ctx;
    if (config.retentionMs === undefined || clock.now() - this.lastPurge < 3600_000) return;
    this.lastPurge = clock.now();
    store.purgeRunsOlderThan(clock.now() - config.retentionMs);
  }

  /**
   * The claim sweep (every live process, a third of a lease apart): renews the runs this process
   * holds, and ends the runs a gone process stranded, in any automation, paused ones too, whether
   * or not it fires again. A read first: the write lock is taken only when some run is active.
   */
  private sweepRuns(): void {
    if (this.stopped) return;
    const { store, clock } = this.ctx;
    store.runClaims.renew(this.ctx.holder, clock.now());
    const active = store.runClaims.automationsWithActiveRuns();
    if (active.length === 0) return;
    store.transaction(() => {
      for (const id of active) this.recorder.endStrandedRuns(id);
    });
  }

  /** Runs cut off by a crash, or whose task settled unseen, are ended (see RunRecorder.endStrandedRuns). */
  private recoverRuns(): void {
    const { store } = this.ctx;
    store.transaction(() => {
      for (const a of store.automations()) this.recorder.endStrandedRuns(a.id);
    });
  }
}

function capText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n[... ${text.length - max} more characters]` : text;
}


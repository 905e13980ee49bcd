import { randomBytes } from "node:crypto";
import { TaskError, errorMessage } from "../core/errors.ts";
import type { ModelRef, Task } from "../core/task.ts";
import { parseRunBatchId, type Automation, type Proposal, type Run, type Trigger } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import { AutomationScheduler } from "./automation-scheduler.ts";
import { RunRecorder } from "./run-recorder.ts";
import { RunStarter } from "./run-starter.ts";
import { nextOccurrence, parseTrigger, TriggerSpecError, type TriggerInput } from "./trigger-spec.ts";
import type { EventSources } from "../triggers/event-sources.ts";
import type { FireResult } from "../triggers/source-loaders.ts";
import type { TriggerEvent } from "../triggers/trigger-source.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import { firstLine } from "./automation-text.ts";
import { checkRunnable } from "./step-spec.ts";
import type { ProposalService } from "../proposals/proposal-service.ts";

/** What the model sets on an automation (task_create, task_update); the rest is the plugin's. */
export type AutomationFields = Pick<
  Automation,
  "title" | "prompt" | "agent" | "model" | "notify" | "sessionMode" | "maxRuns" | "overlap" | "catchUp" | "enabled" | "expect" | "channels" | "report" | "steps" | "worker"
>;

/** Who creates it: the session runs report to, with its agent and model. */
export type Creator = { sessionID: string; agent: string; model?: ModelRef };

const newId = (prefix: string) => `${prefix}${randomBytes(6).toString("hex")}`;

/** An event's data in a run's prompt: at most this many characters. */
const EVENT_DATA_CAP = 8192;

function capText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n[... ${text.length - max} more characters]` : text;
}

/** The automation layer's entry point: what the task_* tools and the plugin call. */
export class AutomationService {
  readonly recorder: RunRecorder;
  readonly starter: RunStarter;
  readonly scheduler: AutomationScheduler;
  /** Event triggers' sources (watchers, pollers, the webhook listener); set by createAutomations. */
  sources: EventSources | undefined;
  /** Automations the agent proposed, waiting for the user; set by createAutomations. */
  proposals: ProposalService | undefined;
  /** Looks for useful work while the user is idle (option discovery); set by createAutomations. */
  discovery: { start(): void; stop(): void } | undefined;

  constructor(private ctx: AutomationContext) {
    this.recorder = new RunRecorder(ctx);
    this.starter = new RunStarter(ctx, this.recorder);
    this.scheduler = new AutomationScheduler(ctx, this.starter);
    this.recorder.onRunEnded = (id) => {
      if (this.stopped) return;
      this.starter.startWaiting(id);
      this.changed();
    };
    this.recorder.stepsRunning = (run) => this.starter.steps.running(run);
    ctx.manager.onSettle((task) => this.recorder.onTaskSettled(task));
    this.scheduler.afterWake = () => {
      this.purgeHourly();
      this.proposals?.expire();
      // Another process may have added event triggers: a process that had none holds no tick of its
      // own, so without this it would never run their sources, nor take them over when that process dies.
      this.sources?.sync();
    };
  }

  private lastPurge = 0;
  private stopped = false;

  /** Retention: old history rows go at start and then at most once an hour. */
  purgeHourly(): void {
    const { clock, store, config } = this.ctx;
    if (config.retentionMs === undefined || clock.now() - this.lastPurge < 3600_000) return;
    this.lastPurge = clock.now();
    store.purgeRunsOlderThan(clock.now() - config.retentionMs);
  }

  /** Call once the core has started (its recovery may settle runs): ends runs cut off by a crash, then schedules. */
  start(): void {
    this.recoverRuns();
    this.scheduler.start();
    this.sources?.sync();
    this.discovery?.start();
  }

  stop(): void {
    this.stopped = true;
    this.starter.steps.stop();
    this.scheduler.stop();
    this.discovery?.stop();
    void this.sources?.stop();
  }

  /** After any change to automations, triggers or runs: the timer and the event sources follow. */
  private changed(): void {
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
      return this.starter.admit(a, { triggerId, firedBy: trigger.spec.kind as Run["firedBy"], event: { summary, data } });
    });
    if (!run) return undefined;
    this.changed();
    const launched = run.status === "starting" ? this.starter.launch(run) : Promise.resolve();
    return { runId: run.id, launched };
  }

  private saveWebhooks(webhooks: Map<string, { name: string; secret: string }>, now: number): void {
    for (const [triggerId, hook] of webhooks) {
      try {
        this.sources!.store.addWebhook({ name: hook.name, triggerId, secret: hook.secret, createdAt: now });
      } catch (error) {
        if (/UNIQUE|constraint/i.test(errorMessage(error))) throw new TaskError(`The webhook name "${hook.name}" was just taken; choose another.`);
        throw error;
      }
    }
  }

  /** A history row for an event that did not run (e.g. a webhook delivery that expired while no process ran). */
  recordSkip(triggerId: string, summary: string, reason: string): void {
    const { store, clock } = this.ctx;
    const trigger = store.trigger(triggerId);
    if (!trigger) return;
    store.insertRun({
      automationId: trigger.automationId, triggerId, firedBy: trigger.spec.kind as Run["firedBy"], status: "skipped",
      skipReason: reason, createdAt: clock.now(), eventSummary: summary,
    });
  }

  /** A run that a crash cut off before it launched; its event is fired again, so this one is only history. */
  abandonRun(runId: number): void {
    const { store, clock } = this.ctx;
    const run = store.run(runId);
    if (run?.status === "starting" && run.taskId === undefined) {
      store.updateRun(runId, { status: "skipped", skipReason: "interrupted", endedAt: clock.now(), summary: "OpenCode stopped before the run launched; the event was fired again" });
    }
  }

  /** Parses the trigger objects; throws a TaskError saying how to fix the first bad one. */
  parseTriggers(inputs: TriggerInput[], automationId: string): Trigger[] {
    const now = this.ctx.clock.now();
    return inputs.map((input, i) => {
      try {
        const spec = parseTrigger(input, now);
        const trigger: Trigger = { id: newId("tr"), automationId, spec, createdAt: now };
        return { ...trigger, nextAt: nextOccurrence(trigger, now) };
      } catch (error) {
        if (error instanceof TriggerSpecError) throw new TaskError(`triggers[${i}]: ${error.message}`);
        throw error;
      }
    });
  }

  /**
   * What event triggers need beyond parsing, before anything is stored: a webhook's name must be
   * free and gets its URL and a new secret (the user may set their own with the CLI); `github: "."` becomes the
   * project's origin repository. Returns the new webhooks' secrets by trigger id.
   */
  async prepareEventTriggers(triggers: Trigger[], inputs: TriggerInput[]): Promise<Map<string, { name: string; secret: string }>> {
    const webhooks = new Map<string, { name: string; secret: string }>();
    const sources = this.sources;
    for (const [i, trigger] of triggers.entries()) {
      const spec = trigger.spec;
      if (spec.kind === "webhook") {
        if (!sources) throw new TaskError("Event triggers are unavailable in this process.");
        const names = [...webhooks.values()].map((w) => w.name);
        if (sources.store.webhook(spec.name) || names.includes(spec.name)) throw new TaskError(`triggers[${i}]: the webhook name "${spec.name}" is taken; choose another, e.g. "${spec.name}-2".`);
        spec.url = sources.webhookUrl(spec.name);
        const { newWebhookSecret } = await import("../triggers/webhook-signature.ts");
        webhooks.set(trigger.id, { name: spec.name, secret: newWebhookSecret() }); // never one from the tool call (parse refuses it)
      }
      if (spec.kind === "github" && spec.repo === ".") {
        const { resolveGithubRepo } = await import("../triggers/github-source.ts");
        try {
          spec.repo = await resolveGithubRepo(".", sources?.directory ?? process.cwd());
        } catch (error) {
          throw new TaskError(`triggers[${i}]: ${errorMessage(error)}`);
        }
      }
    }
    return webhooks;
  }

  newAutomationId(): string {
    return newId("au");
  }

  create(id: string, fields: AutomationFields, triggers: Trigger[], creator: Creator, webhooks = new Map<string, { name: string; secret: string }>(), proposal?: Proposal): { automation: Automation; triggers: Trigger[] } {
    const now = this.ctx.clock.now();
    const automation: Automation = {
      id, ...fields, reportTo: creator.sessionID, reportAgent: creator.agent, reportModel: creator.model,
      createdBy: creator.sessionID, createdAt: now, updatedAt: now, runCount: 0, consecutiveFailures: 0,
      ...(proposal ? { proposal, enabled: false } : {}),
    };
    if (!automation.model) delete automation.model;
    if (!automation.reportModel) delete automation.reportModel;
    if (!automation.expect) delete automation.expect;
    if (!automation.channels?.length) delete automation.channels;
    if (!automation.report) delete automation.report;
    if (!automation.steps?.length) delete automation.steps;
    if (!automation.worker || automation.worker === "local") delete automation.worker;
    checkRunnable(automation);
    this.ctx.store.transaction(() => {
      this.ctx.store.saveAutomation(automation);
      for (const t of triggers) this.ctx.store.saveTrigger(t);
      this.saveWebhooks(webhooks, now);
    });
    this.changed();
    return { automation, triggers };
  }

  /** Changes fields; resuming (enabled: true) clears the pause and plans from now, so a paused time is not "missed". */
  update(id: string, patch: Partial<AutomationFields> & { reportTo?: Creator }): Automation {
    const { store, clock } = this.ctx;
    const updated = store.transaction(() => {
      const a = this.require(id);
      const now = clock.now();
      const { reportTo, ...fields } = patch;
      const next: Automation = { ...a, ...fields, updatedAt: now };
      delete next.reportToGoneAt;
      if (!next.expect) delete next.expect;
      if (!next.channels?.length) delete next.channels;
      if (!next.steps?.length) delete next.steps;
      if (!next.worker || next.worker === "local") delete next.worker;
      checkRunnable(next);
      if (reportTo) Object.assign(next, { reportTo: reportTo.sessionID, reportAgent: reportTo.agent, reportModel: reportTo.model });
      if (patch.maxRuns !== undefined && next.doneAt !== undefined && next.runCount < patch.maxRuns) delete next.doneAt;
      if (patch.enabled === true && !a.enabled) {
        delete next.pausedReason;
        delete next.proposal;
        next.consecutiveFailures = 0;
      }
      const resumes = (next.enabled && !a.enabled) || (a.doneAt !== undefined && next.doneAt === undefined);
      if (resumes) for (const t of store.triggers(id)) store.saveTrigger({ ...t, lastPlannedAt: now, nextAt: nextOccurrence(t, now) });
      if (patch.enabled === false) this.recorder.skipWaiting(id, "paused");
      store.saveAutomation(next);
      return next;
    });
    this.changed();
    return updated;
  }

  delete(id: string): Automation {
    const a = this.ctx.store.transaction(() => {
      const found = this.require(id);
      this.ctx.store.deleteAutomation(found.id);
      return found;
    });
    this.changed();
    return a;
  }

  addTriggers(id: string, triggers: Trigger[], webhooks = new Map<string, { name: string; secret: string }>()): void {
    this.ctx.store.transaction(() => {
      this.require(id);
      for (const t of triggers) this.ctx.store.saveTrigger(t);
      this.saveWebhooks(webhooks, this.ctx.clock.now());
    });
    this.changed();
  }

  removeTrigger(triggerId: string): Trigger {
    const trigger = this.ctx.store.trigger(triggerId);
    if (!trigger) throw new TaskError(`No trigger "${triggerId}". task_read shows an automation's triggers with their ids.`);
    this.ctx.store.removeTrigger(triggerId);
    this.changed();
    return trigger;
  }

  /** task_run: a run now, whatever the triggers (the overlap policy still applies). */
  async runNow(id: string): Promise<{ run: Run; task?: Task }> {
    const run = this.ctx.store.transaction(() => {
      const a = this.require(id);
      if (a.proposal) throw new TaskError(`${a.id} "${a.title}" is a proposal: it runs once the user approves it (task_update { id, enabled: true }).`);
      if (a.doneAt !== undefined) throw new TaskError(`Automation ${a.id} is done (max_runs ${a.maxRuns} reached). Raise max_runs with task_update to run it again.`);
      return this.starter.admit(a, { firedBy: "manual" })!;
    });
    if (run.status !== "starting") return { run };
    return this.starter.launch(run);
  }

  /**
   * Channels are the user's: a definition may only name ones the plugin's `channels` option
   * configures, so a model (or a prompt injection it read) cannot send results elsewhere.
   */
  checkChannels(fields: Pick<Partial<AutomationFields>, "channels" | "report">, current?: Automation): void {
    const configured = this.ctx.channels?.names() ?? [];
    const listed = configured.length > 0 ? `Configured: ${configured.join(", ")}.` : "None are configured: the user adds them under the plugin's \"channels\" option.";
    for (const name of fields.channels ?? []) {
      if (/[:/]/.test(name)) throw new TaskError(`channels take the names of channels the user configured, never a URL. ${listed}`);
      if (!configured.includes(name)) throw new TaskError(`Unknown channel "${name}". ${listed}`);
    }
    const channels = fields.channels ?? current?.channels ?? [];
    if ((fields.report ?? current?.report) === "channels" && channels.length === 0) {
      throw new TaskError(`report: "channels" needs at least one channel in channels. ${listed}`);
    }
  }

  /** An automation's worker must be "local", "auto" or one the workers option names. */
  checkWorker(worker: string | undefined): void {
    if (worker === undefined || worker === "local" || worker === "auto") return;
    const names = this.ctx.config.workerNames ?? [];
    if (names.includes(worker)) return;
    const known = names.length ? `"local", "auto" or ${names.join(", ")}` : `"local" or "auto" (no workers are configured: plugin option "workers")`;
    throw new TaskError(`No worker "${worker}"; worker takes ${known}.`);
  }

  /**
   * background_cancel and the dashboard, given a run's batch id (`auto_<automation>_<run>`): kills
   * the running step of a run in its steps phase. Undefined when the id names no such run.
   */
  async cancelSteps(batchId: string): Promise<string | undefined> {
    const named = parseRunBatchId(batchId.trim());
    const run = named && this.ctx.store.runByNumber(named.automationId, named.runNo);
    if (!run || run.status !== "running" || run.taskId !== undefined || run.stepsBy === undefined) return undefined;
    if (await this.starter.steps.cancel(run.id)) {
      const ended = this.ctx.store.run(run.id);
      return `${batchId}: ${ended?.status === "cancelled" ? "cancelled; its running step was killed" : `ended ${ended?.status ?? "?"}`}.`;
    }
    return `${batchId}: its steps run in another OpenCode process (${run.stepsBy}); cancel it there.`;
  }

  /** Whether this process runs the steps of the run that batch id names (a dashboard cancel is its to apply). */
  runsStepsOf(batchId: string): boolean {
    const named = parseRunBatchId(batchId.trim());
    const run = named && this.ctx.store.runByNumber(named.automationId, named.runNo);
    return !!run && run.taskId === undefined && run.stepsBy === this.starter.steps.holder;
  }

  /** Refuses an agent the host does not know, naming the ones it has. */
  async checkAgent(name: string): Promise<void> {
    const agents = await this.ctx.host.agents();
    if (!agents.some((a) => a.name === name)) throw new TaskError(`Unknown agent "${name}". Available agents: ${agents.map((a) => a.name).join(", ")}.`);
  }

  /** Runs fn in one SQLite transaction (nested calls join it). */
  transaction<T>(fn: () => T): T {
    return this.ctx.store.transaction(fn);
  }

  /** Every automation of the project, proposals included. */
  all(): Automation[] {
    return this.ctx.store.automations();
  }

  list(): { automation: Automation; triggers: Trigger[]; lastRun?: Run }[] {
    return this.ctx.store.automations().map((automation) => ({
      automation,
      triggers: this.ctx.store.triggers(automation.id),
      lastRun: this.ctx.store.runs(automation.id, 1)[0],
    }));
  }

  /** Where a run's notice went outside OpenCode, one line per channel. */
  channelLines(runId: number): string[] {
    return this.ctx.channels?.statusLines(runId) ?? [];
  }

  /** Webhook deliveries stored for the trigger and not yet fired. */
  waitingDeliveries(trigger: Trigger): number {
    return trigger.spec.kind === "webhook" && this.sources ? this.sources.store.waitingDeliveries(trigger.id) : 0;
  }

  triggers(id: string): Trigger[] {
    return this.ctx.store.triggers(id);
  }

  runs(id: string, limit: number): Run[] {
    return this.ctx.store.runs(id, limit);
  }

  get(id: string): Automation | undefined {
    return this.find(id);
  }

  require(id: string): Automation {
    const a = this.find(id);
    if (!a) throw new TaskError(`No automation "${id}" in this project. task_list shows their ids.`);
    return a;
  }

  private find(id: string): Automation | undefined {
    const exact = this.ctx.store.automation(id);
    if (exact) return exact;
    const matches = this.ctx.store.automations().filter((a) => a.id.startsWith(id));
    return matches.length === 1 ? matches[0] : undefined;
  }

  /** Runs cut off by a crash, or whose task settled unseen, are ended (see RunRecorder.reconcile). */
  private recoverRuns(): void {
    const { store } = this.ctx;
    store.transaction(() => {
      for (const a of store.automations()) this.recorder.reconcile(a.id);
    });
  }
}

import { randomBytes } from "node:crypto";
import { TaskError } from "../core/errors.ts";
import type { ModelRef, Task } from "../core/task.ts";
import type { Automation, Run, Trigger } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import { AutomationScheduler } from "./automation-scheduler.ts";
import { RunRecorder } from "./run-recorder.ts";
import { RunStarter } from "./run-starter.ts";
import { nextOccurrence, parseTrigger, TriggerSpecError, type TriggerInput } from "./trigger-spec.ts";

/** What the model sets on an automation (task_create, task_update); the rest is the plugin's. */
export type AutomationFields = Pick<
  Automation,
  "title" | "prompt" | "agent" | "model" | "notify" | "sessionMode" | "maxRuns" | "overlap" | "catchUp" | "enabled" | "expect"
>;

/** Who creates it: the session runs report to, with its agent and model. */
export type Creator = { sessionID: string; agent: string; model?: ModelRef };

const newId = (prefix: string) => `${prefix}${randomBytes(6).toString("hex")}`;

/** The automation layer's entry point: what the task_* tools and the plugin call. */
export class AutomationService {
  readonly recorder: RunRecorder;
  readonly starter: RunStarter;
  readonly scheduler: AutomationScheduler;

  constructor(private ctx: AutomationContext) {
    this.recorder = new RunRecorder(ctx);
    this.starter = new RunStarter(ctx, this.recorder);
    this.scheduler = new AutomationScheduler(ctx, this.starter);
    this.recorder.onRunEnded = (id) => {
      this.starter.startWaiting(id);
      this.scheduler.rearm();
    };
    ctx.manager.onSettle((task) => this.recorder.onTaskSettled(task));
    this.scheduler.afterWake = () => this.purgeHourly();
  }

  private lastPurge = 0;

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
  }

  stop(): void {
    this.scheduler.stop();
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

  newAutomationId(): string {
    return newId("au");
  }

  create(id: string, fields: AutomationFields, triggers: Trigger[], creator: Creator): { automation: Automation; triggers: Trigger[] } {
    const now = this.ctx.clock.now();
    const automation: Automation = {
      id, ...fields, reportTo: creator.sessionID, reportAgent: creator.agent, reportModel: creator.model,
      createdBy: creator.sessionID, createdAt: now, updatedAt: now, runCount: 0, consecutiveFailures: 0,
    };
    if (!automation.model) delete automation.model;
    if (!automation.reportModel) delete automation.reportModel;
    if (!automation.expect) delete automation.expect;
    this.ctx.store.transaction(() => {
      this.ctx.store.saveAutomation(automation);
      for (const t of triggers) this.ctx.store.saveTrigger(t);
    });
    this.scheduler.rearm();
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
      if (reportTo) Object.assign(next, { reportTo: reportTo.sessionID, reportAgent: reportTo.agent, reportModel: reportTo.model });
      if (patch.maxRuns !== undefined && next.doneAt !== undefined && next.runCount < patch.maxRuns) delete next.doneAt;
      if (patch.enabled === true && !a.enabled) {
        delete next.pausedReason;
        next.consecutiveFailures = 0;
      }
      const resumes = (next.enabled && !a.enabled) || (a.doneAt !== undefined && next.doneAt === undefined);
      if (resumes) for (const t of store.triggers(id)) store.saveTrigger({ ...t, lastPlannedAt: now, nextAt: nextOccurrence(t, now) });
      if (patch.enabled === false) this.recorder.skipWaiting(id, "paused");
      store.saveAutomation(next);
      return next;
    });
    this.scheduler.rearm();
    return updated;
  }

  delete(id: string): Automation {
    const a = this.ctx.store.transaction(() => {
      const found = this.require(id);
      this.ctx.store.deleteAutomation(found.id);
      return found;
    });
    this.scheduler.rearm();
    return a;
  }

  addTriggers(id: string, triggers: Trigger[]): void {
    this.ctx.store.transaction(() => {
      this.require(id);
      for (const t of triggers) this.ctx.store.saveTrigger(t);
    });
    this.scheduler.rearm();
  }

  removeTrigger(triggerId: string): Trigger {
    const trigger = this.ctx.store.trigger(triggerId);
    if (!trigger) throw new TaskError(`No trigger "${triggerId}". task_read shows an automation's triggers with their ids.`);
    this.ctx.store.removeTrigger(triggerId);
    this.scheduler.rearm();
    return trigger;
  }

  /** task_run: a run now, whatever the triggers (the overlap policy still applies). */
  async runNow(id: string): Promise<{ run: Run; task?: Task }> {
    const run = this.ctx.store.transaction(() => {
      const a = this.require(id);
      if (a.doneAt !== undefined) throw new TaskError(`Automation ${a.id} is done (max_runs ${a.maxRuns} reached). Raise max_runs with task_update to run it again.`);
      return this.starter.admit(a, { firedBy: "manual" })!;
    });
    if (run.status !== "starting") return { run };
    return this.starter.launch(run);
  }

  /** Refuses an agent the host does not know, naming the ones it has. */
  async checkAgent(name: string): Promise<void> {
    const agents = await this.ctx.host.agents();
    if (!agents.some((a) => a.name === name)) throw new TaskError(`Unknown agent "${name}". Available agents: ${agents.map((a) => a.name).join(", ")}.`);
  }

  list(): { automation: Automation; triggers: Trigger[]; lastRun?: Run }[] {
    return this.ctx.store.automations().map((automation) => ({
      automation,
      triggers: this.ctx.store.triggers(automation.id),
      lastRun: this.ctx.store.runs(automation.id, 1)[0],
    }));
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

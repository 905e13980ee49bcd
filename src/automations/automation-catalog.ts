import { randomBytes } from "node:crypto";
import { AutomationRefusal, errorMessage } from "../core/errors.ts";
import type { ModelRef } from "../core/task.ts";
import type { Automation, Proposal, Run, Trigger } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import { checkAgent, checkChannels, checkIsolation, checkWorker } from "./definition-checks.ts";
import type { RunLifecycle } from "./run-lifecycle.ts";
import { checkRunnable } from "./step-spec.ts";
import { nextOccurrence, parseTrigger, TriggerSpecError, type TriggerInput } from "./trigger-spec.ts";
import { prepareTriggers, recheckTriggers } from "../triggers/prepare-triggers.ts";
import { approvedDefinition, nextApproval, USER_APPROVAL, type Approval } from "./approved-version.ts";

/** What the model sets on an automation (task_create, task_update); the rest is the plugin's. */
export type AutomationFields = Pick<
  Automation,
  "title" | "prompt" | "agent" | "model" | "notify" | "sessionMode" | "maxRuns" | "overlap" | "catchUp" | "enabled" | "expect" | "channels" | "report" | "steps" | "worker" | "budget" | "isolation" | "promptWhen"
>;

/** Who creates it: the session runs report to, with its agent and model. */
export type Creator = { sessionID: string; agent: string; model?: ModelRef };

/** A new webhook's name and secret, by trigger id (made by prepareEventTriggers). */
export type NewWebhooks = Map<string, { name: string; secret: string }>;

const newId = (prefix: string) => `${prefix}${randomBytes(6).toString("hex")}`;

/**
 * The project's automations and their triggers: create, change, delete, look up, and the checks a
 * definition must pass. Every change is followed by the run lifecycle (its timer and event sources).
 */
export class AutomationCatalog {
  constructor(private ctx: AutomationContext, private runs: RunLifecycle) {}

  newAutomationId(): string {
    return newId("au");
  }

  /** Parses the trigger objects; throws a refusal saying how to fix the first bad one. */
  parseTriggers(inputs: TriggerInput[], automationId: string): Trigger[] {
    const now = this.ctx.clock.now();
    return inputs.map((input, i) => {
      try {
        const spec = parseTrigger(input, now);
        const trigger: Trigger = { id: newId("tr"), automationId, spec, createdAt: now };
        return { ...trigger, nextAt: nextOccurrence(trigger, now) };
      } catch (error) {
        if (error instanceof TriggerSpecError) throw new AutomationRefusal(`triggers[${i}]: ${error.message}`);
        throw error;
      }
    });
  }

  /**
   * What event triggers need beyond parsing, before anything is stored: a webhook's name must be
   * free and gets its URL and a new secret (the user may set their own with the CLI); `github: "."` becomes the
   * project's origin repository. Returns the new webhooks' secrets by trigger id.
   */
  async prepareEventTriggers(triggers: Trigger[]): Promise<NewWebhooks> {
    const { store } = this.ctx;
    const sources = this.runs.sources;
    let names: Map<string, string>;
    try {
      names = await prepareTriggers(triggers, {
        directory: sources?.directory ?? process.cwd(),
        automationExists: (id) => store.automation(id) !== undefined,
        specsOf: (id) => store.triggers(id).map((t) => t.spec),
        ...(sources ? { webhooks: { taken: (name: string) => sources.store.webhook(name) !== undefined, url: (name: string) => sources.webhookUrl(name) } } : {}),
      });
    } catch (error) {
      if (error instanceof TriggerSpecError) throw new AutomationRefusal(error.message);
      throw error;
    }
    if (names.size === 0) return new Map();
    const { newWebhookSecret } = await import("../triggers/webhook-signature.ts");
    return new Map([...names].map(([id, name]) => [id, { name, secret: newWebhookSecret() }])); // never one from the tool call (parse refuses it)
  }

  /**
   * What approving `patch` (and `newTriggers`) on `a` would record, with the key the user is asked
   * for it. `a` may be a new automation's id and fields (task_create asks before storing).
   */
  approvalOf(a: Pick<Automation, "id" | "approved"> & AutomationFields, patch: Partial<AutomationFields> = {}, newTriggers: Trigger[] = []): Approval & { key: string } {
    const specs = [...this.ctx.store.triggers(a.id), ...newTriggers].map((t) => t.spec);
    return nextApproval(a, approvedDefinition({ ...a, ...patch }, specs));
  }

  create(id: string, fields: AutomationFields, triggers: Trigger[], creator: Creator, webhooks: NewWebhooks = new Map(), proposal?: Proposal, approval?: string): { automation: Automation; triggers: Trigger[] } {
    const now = this.ctx.clock.now();
    const automation: Automation = withoutEmpty({
      id, ...fields, reportTo: creator.sessionID, reportAgent: creator.agent, reportModel: creator.model,
      createdBy: creator.sessionID, createdAt: now, updatedAt: now, runCount: 0, consecutiveFailures: 0,
      ...(proposal ? { proposal, enabled: false } : {}),
    });
    if (!automation.model) delete automation.model;
    if (!automation.reportModel) delete automation.reportModel;
    if (!automation.report) delete automation.report;
    checkRunnable(automation);
    checkIsolation(automation);
    this.ctx.store.transaction(() => {
      if (approval !== undefined && automation.enabled) automation.approved = this.approved(automation, automation, triggers, approval);
      this.ctx.store.saveAutomation(automation);
      for (const t of triggers) this.ctx.store.saveTrigger(t);
      this.saveWebhooks(webhooks, now);
    });
    this.runs.changed();
    return { automation, triggers };
  }

  /**
   * Changes fields; resuming (enabled: true) clears the pause and plans from now, so a paused time
   * is not "missed". `approval`: the user approved the result (the key they were asked, or USER_APPROVAL).
   */
  update(id: string, patch: Partial<AutomationFields> & { reportTo?: Creator }, approval?: string): Automation {
    const { store, clock } = this.ctx;
    const updated = store.transaction(() => {
      const a = this.require(id);
      const now = clock.now();
      const { reportTo, ...fields } = patch;
      const next: Automation = withoutEmpty({ ...a, ...fields, updatedAt: now });
      delete next.reportToGoneAt;
      checkRunnable(next);
      checkIsolation(next);
      if (reportTo) Object.assign(next, { reportTo: reportTo.sessionID, reportAgent: reportTo.agent, reportModel: reportTo.model });
      if (patch.maxRuns !== undefined && next.doneAt !== undefined && next.runCount < patch.maxRuns) delete next.doneAt;
      if (patch.enabled === true && !a.enabled) {
        delete next.pausedReason;
        delete next.proposal;
        next.consecutiveFailures = 0;
      }
      const resumes = (next.enabled && !a.enabled) || (a.doneAt !== undefined && next.doneAt === undefined);
      if (resumes) for (const t of store.triggers(id)) store.saveTrigger({ ...t, lastPlannedAt: now, nextAt: nextOccurrence(t, now) });
      if (patch.enabled === false) this.ctx.runs.skipWaiting(id, "paused");
      if (approval !== undefined) next.approved = this.approved(a, next, store.triggers(id), approval);
      store.saveAutomation(next);
      return next;
    });
    this.runs.changed();
    return updated;
  }

  /** Records that the user approved `id` as it is (task_run of one never approved), with the key they were asked. */
  recordApproval(id: string, approval: string): Automation {
    return this.ctx.store.transaction(() => {
      const a = this.require(id);
      const approved: Automation = { ...a, approved: this.approved(a, a, this.ctx.store.triggers(a.id), approval) };
      this.ctx.store.saveAutomation(approved);
      return approved;
    });
  }

  delete(id: string): Automation {
    const a = this.ctx.store.transaction(() => {
      const found = this.require(id);
      this.ctx.store.deleteAutomation(found.id);
      return found;
    });
    this.runs.changed();
    return a;
  }

  /** Stores new triggers; `approval` as for update. The kinds' checks against other triggers run again here (recheckTriggers). */
  addTriggers(id: string, triggers: Trigger[], webhooks: NewWebhooks = new Map(), approval?: string): void {
    const { store } = this.ctx;
    store.transaction(() => {
      const a = this.require(id);
      try {
        recheckTriggers(triggers, (other) => store.triggers(other).map((t) => t.spec));
      } catch (error) {
        if (error instanceof TriggerSpecError) throw new AutomationRefusal(`${error.message} Nothing was stored.`);
        throw error;
      }
      if (approval !== undefined) store.saveAutomation({ ...a, approved: this.approved(a, a, [...store.triggers(a.id), ...triggers], approval) });
      for (const t of triggers) this.ctx.store.saveTrigger(t);
      this.saveWebhooks(webhooks, this.ctx.clock.now());
    });
    this.runs.changed();
  }

  removeTrigger(triggerId: string): Trigger {
    const trigger = this.ctx.store.trigger(triggerId);
    if (!trigger) throw new AutomationRefusal(`No trigger "${triggerId}". task_read shows an automation's triggers with their ids.`);
    this.ctx.store.removeTrigger(triggerId);
    this.runs.changed();
    return trigger;
  }

  checkChannels(fields: Pick<Partial<AutomationFields>, "channels" | "report">, current?: Automation): void {
    checkChannels(this.ctx, fields, current);
  }

  checkWorker(worker: string | undefined): void {
    checkWorker(this.ctx, worker);
  }

  checkAgent(name: string): Promise<void> {
    return checkAgent(this.ctx, name);
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

  triggers(id: string): Trigger[] {
    return this.ctx.store.triggers(id);
  }

  /** By id, or by a prefix that names one automation. */
  get(id: string): Automation | undefined {
    const exact = this.ctx.store.automation(id);
    if (exact) return exact;
    const matches = this.ctx.store.automations().filter((a) => a.id.startsWith(id));
    return matches.length === 1 ? matches[0] : undefined;
  }

  require(id: string): Automation {
    const a = this.get(id);
    if (!a) throw new AutomationRefusal(`No automation "${id}" in this project. task_list shows their ids.`);
    return a;
  }

  /** The approval to record for `next` (with `triggers`); a key for another definition than this one is refused. */
  private approved(before: Pick<Automation, "id" | "title" | "approved">, next: Automation, triggers: Pick<Trigger, "spec">[], approval: string): Approval {
    const { key, ...recorded } = nextApproval(before, approvedDefinition(next, triggers.map((t) => t.spec)));
    if (approval !== USER_APPROVAL && approval !== key) {
      throw new AutomationRefusal(`Automation ${before.id} "${before.title}" changed while the user was being asked; nothing was stored. Call again: the user is asked about what it is now.`);
    }
    return recorded;
  }

  private saveWebhooks(webhooks: NewWebhooks, now: number): void {
    for (const [triggerId, hook] of webhooks) {
      try {
        this.runs.sources!.store.addWebhook({ name: hook.name, triggerId, secret: hook.secret, createdAt: now });
      } catch (error) {
        if (/UNIQUE|constraint/i.test(errorMessage(error))) throw new AutomationRefusal(`The webhook name "${hook.name}" was just taken; choose another.`);
        throw error;
      }
    }
  }
}

/** Optional fields left empty are not stored (no expect, no channels, no steps, the local worker). */
function withoutEmpty(a: Automation): Automation {
  if (!a.expect) delete a.expect;
  if (!a.channels?.length) delete a.channels;
  if (!a.steps?.length) delete a.steps;
  if (!a.worker || a.worker === "local") delete a.worker;
  if (!a.budget) delete a.budget;
  if (a.isolation !== "worktree") delete a.isolation;
  // Stored as "always" or absent: absent is the default, "failure".
  if (a.promptWhen !== "always") delete a.promptWhen;
  return a;
}

import { createHash } from "node:crypto";
import type { Task } from "../core/task.ts";
import { ACTIVE_RUN, type Automation, type Run, type Trigger } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import { decideNotify, type RunOutcome } from "./notify-policy.ts";
import { firedByText, firstLine, pausedLine, pausedText, runNoticeLine, runNotificationText } from "./automation-text.ts";
import { resultWithBranch, type ChannelNotice } from "../channels/channel-message.ts";
import { branchLeftBy } from "./run-worktree.ts";
import { claimLive } from "../core/claims.ts";

/** A run still `starting` this long after it was claimed, without a holder (written before run claims), was cut off by a crash (a launch takes ~1 s). */
const STALE_START_MS = 120_000;

/** Who hears of a finished run: the report-to session, channels, an extra notice, and the note for the history row. */
type Audience = { session: boolean; channels: string[]; extra?: RunNotice; note: string };
/** A notice for the report-to session: the payload for the model, the line a person sees, the history note. */
export type RunNotice = { text: string; line: string; note: string };
/** The facts a finished run's row keeps of its outcome. */
type EndFacts = { endedAt: number; hash?: string; summary: string };

/**
 * Records how runs end: the run row, the automation's counters, the notify policy, the pause
 * after consecutive failures. Called inside the core's settle transaction (or one of its own),
 * so the run row and its notification commit with the settle.
 */
export class RunRecorder {
  constructor(
    private ctx: AutomationContext,
    private hooks: {
      /** After a run ended and its transaction committed (a waiting run may start now). */
      onRunEnded: (automationId: string) => void;
      /** Whether a run in its steps phase (no task yet) is still being run, here or by another live process. */
      stepsRunning: (run: Run) => boolean;
      /** A notice for the report-to session whatever the notify policy (discovery: the proposals a run made). */
      extraNotice?: (a: Automation, run: Run) => RunNotice | undefined;
    },
  ) {}

  /** The core's settle listener: the run is found by its task_id column (linked when the task was saved). */
  onTaskSettled(task: Task): void {
    const run = this.ctx.store.activeRunOfTask(task.id);
    if (!run) return;
    if (task.status !== "completed" && task.status !== "error" && task.status !== "cancelled") return;
    if (task.worktree && !task.worktree.removed) return void this.finishIsolated(task);
    this.finish(run, { status: task.status, result: task.result, error: task.error }, task.id);
  }

  /**
   * An isolated run ends once git has said whether it changed anything (after the settle's
   * transaction: git is not run inside one): its branch is named on the run, else its worktree and
   * branch are gone. A process that dies first leaves the run to endStrandedRuns.
   */
  private async finishIsolated(task: Task): Promise<void> {
    const branch = await branchLeftBy(task).catch((error) => {
      this.ctx.logError(`Could not check the worktree of automation run task ${task.id}; its branch is kept`, error);
      return task.worktree!.branch;
    });
    const { store, manager, clock } = this.ctx;
    store.transaction(() => {
      if (!branch) manager.recordWorktreeRemoval(task.id, { at: clock.now(), by: "discard", branchKept: false });
      const run = store.activeRunOfTask(task.id);
      const settled = manager.get(task.id) ?? task;
      if (!run || (settled.status !== "completed" && settled.status !== "error" && settled.status !== "cancelled")) return;
      this.finish({ ...run, ...(branch ? { branch } : {}) }, { status: settled.status, result: settled.result, error: settled.error }, task.id);
    });
  }

  /** Ends a run (inside a transaction); `taskId` names the task whose parent agent/model a notification takes. */
  finish(run: Run, outcome: RunOutcome, taskId: string | undefined): void {
    this.ctx.flushSpend(); // the run's spend commits with its end: a daily budget sees both at once
    const ended: Run = { ...run, taskId: taskId ?? run.taskId };
    const facts = endFacts(outcome, this.ctx.clock.now());
    const a = this.ctx.store.automation(run.automationId);
    if (!a) {
      this.writeEnd(ended, outcome, facts, { notified: false, note: "the automation was deleted" });
      return;
    }
    const updated = this.countOutcome(a, outcome, facts);
    const audience = this.audienceOf(a, updated, outcome, facts, ended);
    const told = { notified: audience.session || audience.channels.length > 0 || audience.extra !== undefined, note: audience.note };
    if (!this.writeEnd(ended, outcome, facts, told)) return; // ended so already: counted and told then
    this.saveCounters(a, updated);
    this.queueChannels(a, ended, outcome, facts, audience.channels);
    this.notifySession(a, updated, ended, outcome, audience);
    this.afterEnd(a, updated);
  }

  /** The run row: its end status (through the run state machine) and what it keeps of the outcome. False: it had ended so already. */
  private writeEnd(run: Run, outcome: RunOutcome, facts: EndFacts, told: { notified: boolean; note: string }): boolean {
    return this.ctx.runs.move(run.id, outcome.status, {
      endedAt: facts.endedAt, resultHash: facts.hash, summary: facts.summary, taskId: run.taskId,
      notified: told.notified, notifyNote: told.note, ...(run.branch ? { branch: run.branch } : {}),
    });
  }

  /** The automation after this outcome: failures counted, paused after too many in a row. */
  private countOutcome(a: Automation, outcome: RunOutcome, facts: EndFacts): Automation {
    const failed = outcome.status !== "completed";
    const updated: Automation = { ...a, updatedAt: facts.endedAt, consecutiveFailures: failed ? a.consecutiveFailures + 1 : 0 };
    if (!failed) updated.lastResultHash = facts.hash;
    if (failed && updated.consecutiveFailures >= this.ctx.config.failurePause && a.enabled) {
      updated.enabled = false;
      updated.pausedReason = `${updated.consecutiveFailures} consecutive failures; last: ${firstLine(outcome.error ?? outcome.status, 200)}`;
    }
    return updated;
  }

  /** Who is told, by the notify policy, the report setting and a report-to session that may be gone. */
  private audienceOf(a: Automation, updated: Automation, outcome: RunOutcome, facts: EndFacts, run: Run): Audience {
    const decision = decideNotify(a, outcome, facts.hash);
    const gone = updated.reportToGoneAt !== undefined;
    const session = decision.notify && a.report !== "channels" && !gone;
    const channels = decision.notify && this.ctx.channels ? (a.channels ?? []) : [];
    const extra = gone ? undefined : this.hooks.extraNotice?.(a, run);
    const note = extra?.note ?? (gone && decision.notify && a.report !== "channels" ? "report-to session gone" : decision.note);
    return { session, channels, extra, note: channels.length > 0 ? `${note}; channels ${channels.join(", ")}` : note };
  }

  /** The automation's new counters; a pause skips its waiting runs. */
  private saveCounters(a: Automation, updated: Automation): void {
    this.ctx.store.saveAutomation(updated);
    if (pausedNow(a, updated)) this.ctx.runs.skipWaiting(a.id, "paused");
  }

  /** Inside the run-end transaction: the channel notice, delivered by the channel layer's outbox. */
  private queueChannels(a: Automation, run: Run, outcome: RunOutcome, facts: EndFacts, channels: string[]): void {
    if (channels.length === 0) return;
    this.ctx.channels!.enqueue(channelNotice(a, run, outcome, facts.summary, this.ctx.store.trigger(run.triggerId ?? "")), channels);
  }

  /** One notification for the report-to session: the run's notice, the pause, the extra notice, as they apply. */
  private notifySession(a: Automation, updated: Automation, run: Run, outcome: RunOutcome, audience: Audience): void {
    const notices = [
      ...(audience.session ? [{ text: runNotificationText(a, run, outcome, this.ctx.config.resultCap), line: runNoticeLine(a, run, outcome) }] : []),
      ...(pausedNow(a, updated) && updated.reportToGoneAt === undefined ? [{ text: pausedText(updated, outcome.error ?? outcome.status), line: pausedLine(updated) }] : []),
      ...(audience.extra ? [audience.extra] : []),
    ];
    if (notices.length === 0) return;
    this.ctx.manager.enqueueNotification({
      id: `auto:${run.id}`, parentSessionID: a.reportTo, taskId: run.taskId ?? a.continueTaskId ?? "", wake: true,
      text: notices.map((n) => n.text).join("\n\n"), visible: notices.map((n) => n.line).join("\n"),
      agent: a.reportAgent, model: a.reportModel,
    });
  }

  /** After the commit: a toast for a pause, and the run's end heard (a waiting run may start). */
  private afterEnd(a: Automation, updated: Automation): void {
    if (pausedNow(a, updated)) this.ctx.afterCommit(() => this.ctx.toast(`"${a.title}" paused after ${updated.consecutiveFailures} failed runs`, "warning"));
    this.ctx.afterCommit(() => this.hooks.onRunEnded(a.id));
  }

  /**
   * Inside a transaction: ends the automation's active runs that can no longer end by themselves:
   * a run whose task settled where no settle listener heard it (a process with automations off),
   * a run still `starting` long after it was claimed (its process died before the launch), and a
   * run in a steps phase that no live process runs. Returns the runs still active.
   */
  endStrandedRuns(automationId: string): Run[] {
    const { store, manager, clock } = this.ctx;
    return store.runsWithStatus(automationId, ACTIVE_RUN).filter((run) => {
      const task = run.taskId ? manager.get(run.taskId) : undefined;
      // settledAt after the run started: a continued session still shows the earlier run's settle until resumed.
      const status = task?.status;
      const settled = status === "completed" || status === "error" || status === "cancelled";
      if (task && settled && (task.settledAt ?? 0) >= (run.startedAt ?? run.createdAt)) {
        this.finish(run, { status, result: task.result, error: task.error }, task.id);
        return false;
      }
      const lost = task ? undefined : this.lostHolder(run);
      if (lost !== undefined && run.status === "starting" && run.firedBy === "webhook") {
        // Its delivery is still unfired: the webhook source fires it again, so this row is only history (as RunLifecycle.abandonRun).
        this.ctx.runs.move(run.id, "skipped", { skipReason: "interrupted", endedAt: clock.now(), summary: "OpenCode stopped before the run launched; the event is fired again", eventKey: undefined });
        return false;
      }
      if (lost !== undefined && run.status === "starting") {
        this.finish(run, { status: "error", error: `OpenCode stopped before the run started${lost ? ` (the process that claimed it, ${lost}, is gone or stopped renewing its claim)` : ""}` }, undefined);
        return false;
      }
      if (task && !settled) this.ctx.store.runClaims.claim(run.id, this.ctx.holder, clock.now(), this.ctx.runLeaseMs); // its holder is gone: the run follows its task here
      if (!task && run.status === "running" && run.stepsBy !== undefined && !this.hooks.stepsRunning(run)) {
        this.finish(run, { status: "error", error: interruptedText(run) }, undefined);
        return false;
      }
      return true;
    });
  }

  /**
   * The holder of a run without a task that can no longer launch it: its name ("" for a row
   * claimed before run claims, once STALE_START_MS has passed); undefined while the run is ours
   * or its holder's claim is live.
   */
  private lostHolder(run: Run): string | undefined {
    const { clock, store } = this.ctx;
    const claim = store.runClaims.holder(run.id);
    if (!claim) return clock.now() - run.createdAt > STALE_START_MS ? "" : undefined;
    if (claim.by === this.ctx.holder || claimLive(claim, clock.now(), this.ctx.runLeaseMs)) return undefined;
    return claim.by;
  }
}

/** A run whose process stopped in its steps phase: which step was cut off; it is not run again by itself. */
export function interruptedText(run: Run): string {
  const step = run.steps?.find((s) => s.status === "running");
  const where = step ? `during step "${step.name}" (\`${step.run}\`)` : "after its steps, before its task started";
  return `Interrupted: OpenCode stopped ${where}; the step is not run again by itself (task_run runs the automation again).`;
}

function pausedNow(before: Automation, after: Automation): boolean {
  return before.enabled && !after.enabled;
}

function endFacts(outcome: RunOutcome, endedAt: number): EndFacts {
  const hash = outcome.status === "completed" ? hashResult(outcome.stableText ?? outcome.result) : undefined;
  const summary = firstLine(outcome.status === "completed" ? outcome.result : (outcome.error ?? outcome.status), 500);
  return { endedAt, hash, summary };
}

/** sha256 of the trimmed result: on_change compares results by it. */
export function hashResult(result: string | undefined): string {
  return createHash("sha256").update((result ?? "").trim()).digest("hex").slice(0, 32);
}

/** What a channel is told of a finished run: the same facts as the session's notice, capped by the channel layer. */
function channelNotice(a: Automation, run: Run, outcome: RunOutcome, summary: string, trigger: Trigger | undefined): ChannelNotice {
  const result = outcome.status === "completed" ? (outcome.result ?? "").trim() : `Error: ${outcome.error ?? outcome.status}`;
  return {
    automation: { id: a.id, title: a.title }, run: { no: run.runNo ?? 0, id: run.id }, status: outcome.status,
    trigger: firedByText(run, trigger), summary, result: resultWithBranch(result, run.branch),
    ...(run.taskId ? { taskId: run.taskId } : {}), ...(run.branch ? { branch: run.branch } : {}),
  };
}

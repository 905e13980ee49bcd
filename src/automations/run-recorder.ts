import { createHash } from "node:crypto";
import type { Task } from "../core/task.ts";
import { ACTIVE_RUN, parseRunBatchId, type Automation, type Run, type Trigger } from "./automation.ts";

/** A run still `starting` this long after it was claimed was cut off by a crash (a launch takes ~1 s). */
const STALE_START_MS = 120_000;
import type { AutomationContext } from "./automation-context.ts";
import { decideNotify, type RunOutcome } from "./notify-policy.ts";
import { firedByText, firstLine, pausedLine, pausedText, runNoticeLine, runNotificationText } from "./automation-text.ts";
import type { ChannelNotice } from "../channels/channel-message.ts";

/**
 * Records how runs end: the run row, the automation's counters, the notify policy, the pause
 * after consecutive failures. Called inside the core's settle transaction (or one of its own),
 * so the run row and its notification commit with the settle.
 */
export class RunRecorder {
  /** Called after a run ended and its transaction committed (a waiting run may start now). */
  onRunEnded: (automationId: string) => void = () => {};
  /** A notice for the report-to session whatever the notify policy (discovery: the proposals a run made). */
  extraNotice: (a: Automation, run: Run) => { text: string; line: string; note: string } | undefined = () => undefined;
  /** Whether a run in its steps phase (no task yet) is still being run, here or by another live process. */
  stepsRunning: (run: Run) => boolean = () => false;

  constructor(private ctx: AutomationContext) {}

  /** The core's settle listener. */
  onTaskSettled(task: Task): void {
    const { store } = this.ctx;
    const byBatch = parseRunBatchId(task.batchId);
    const run = store.activeRunOfTask(task.id) ?? (byBatch && store.runByNumber(byBatch.automationId, byBatch.runNo));
    if (!run || !["starting", "running"].includes(run.status)) return;
    if (task.status !== "completed" && task.status !== "error" && task.status !== "cancelled") return;
    this.finish(run, { status: task.status, result: task.result, error: task.error }, task.id);
  }

  /** Ends a run (inside a transaction); `taskId` names the task whose parent agent/model a notification takes. */
  finish(run: Run, outcome: RunOutcome, taskId: string | undefined): void {
    const { store, clock } = this.ctx;
    const now = clock.now();
    const a = store.automation(run.automationId);
    const hash = outcome.status === "completed" ? hashResult(outcome.stableText ?? outcome.result) : undefined;
    const summary = firstLine(outcome.status === "completed" ? outcome.result : (outcome.error ?? outcome.status), 500);
    if (!a) {
      store.updateRun(run.id, { status: outcome.status, endedAt: now, resultHash: hash, summary, notified: false, notifyNote: "the automation was deleted" });
      return;
    }
    const decision = decideNotify(a, outcome, hash);
    const updated = this.updateCounters(a, outcome, hash, now);
    const paused = a.enabled && !updated.enabled;
    const gone = updated.reportToGoneAt !== undefined;
    const toSession = decision.notify && a.report !== "channels" && !gone;
    const toChannels = decision.notify && this.ctx.channels ? (a.channels ?? []) : [];
    const extra = gone ? undefined : this.extraNotice(a, run);
    const note = extra?.note ?? (gone && decision.notify && a.report !== "channels" ? "report-to session gone" : decision.note);
    store.updateRun(run.id, {
      status: outcome.status, endedAt: now, resultHash: hash, summary, taskId: taskId ?? run.taskId,
      notified: toSession || toChannels.length > 0 || extra !== undefined, notifyNote: toChannels.length > 0 ? `${note}; channels ${toChannels.join(", ")}` : note,
    });
    store.saveAutomation(updated);
    if (paused) this.skipWaiting(a.id, "paused");
    if (toChannels.length > 0) this.ctx.channels!.enqueue(channelNotice(a, { ...run, taskId: taskId ?? run.taskId }, outcome, summary, store.trigger(run.triggerId ?? "")), toChannels);
    // Each notice: the payload for the model, and the line a person sees.
    const notices = [
      ...(toSession ? [{ text: runNotificationText(a, { ...run, taskId }, outcome, this.ctx.config.resultCap), line: runNoticeLine(a, run, outcome) }] : []),
      ...(paused && !gone ? [{ text: pausedText(updated, outcome.error ?? outcome.status), line: pausedLine(updated) }] : []),
      ...(extra ? [extra] : []),
    ];
    if (notices.length > 0) {
      this.ctx.manager.enqueueNotification({
        id: `auto:${run.id}`, parentSessionID: a.reportTo, taskId: taskId ?? run.taskId ?? a.continueTaskId ?? "", wake: true,
        text: notices.map((n) => n.text).join("\n\n"), visible: notices.map((n) => n.line).join("\n"),
        agent: a.reportAgent, model: a.reportModel,
      });
    }
    if (paused) this.ctx.afterCommit(() => this.ctx.toast(`"${a.title}" paused after ${updated.consecutiveFailures} failed runs`, "warning"));
    this.ctx.afterCommit(() => this.onRunEnded(a.id));
  }

  private updateCounters(a: Automation, outcome: RunOutcome, hash: string | undefined, now: number): Automation {
    const failed = outcome.status !== "completed";
    const updated: Automation = { ...a, updatedAt: now, consecutiveFailures: failed ? a.consecutiveFailures + 1 : 0 };
    if (!failed) updated.lastResultHash = hash;
    if (failed && updated.consecutiveFailures >= this.ctx.config.failurePause && a.enabled) {
      updated.enabled = false;
      updated.pausedReason = `${updated.consecutiveFailures} consecutive failures; last: ${firstLine(outcome.error ?? outcome.status, 200)}`;
    }
    return updated;
  }

  /**
   * Inside a transaction: ends the automation's active runs that can no longer end by themselves:
   * a run whose task settled where no settle listener heard it (a process with automations off),
   * and a run still `starting` long after it was claimed (its process died before the launch).
   * Returns the runs still active.
   */
  reconcile(automationId: string): Run[] {
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
      if (!task && run.status === "starting" && clock.now() - run.createdAt > STALE_START_MS) {
        this.finish(run, { status: "error", error: "OpenCode stopped before the run started" }, undefined);
        return false;
      }
      if (!task && run.status === "running" && run.stepsBy !== undefined && !this.stepsRunning(run)) {
        this.finish(run, { status: "error", error: interruptedText(run) }, undefined);
        return false;
      }
      return true;
    });
  }

  /** A waiting (queued) run that will not start now. */
  skipWaiting(automationId: string, reason: string): void {
    for (const waiting of this.ctx.store.runsWithStatus(automationId, ["waiting"])) {
      this.ctx.store.updateRun(waiting.id, { status: "skipped", skipReason: reason });
    }
  }
}

/** A run whose process stopped in its steps phase: which step was cut off; it is not run again by itself. */
export function interruptedText(run: Run): string {
  const step = run.steps?.find((s) => s.status === "running");
  const where = step ? `during step "${step.name}" (\`${step.run}\`)` : "after its steps, before its task started";
  return `Interrupted: OpenCode stopped ${where}; the step is not run again by itself (task_run runs the automation again).`;
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
    trigger: firedByText(run, trigger), summary, result, ...(run.taskId ? { taskId: run.taskId } : {}),
  };
}

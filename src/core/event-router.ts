import type { HostEvent, MessageUsage } from "../host/host.ts";
import { isSettled, UNSETTLED_STATUSES, type ModelRef } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import type { TaskLifecycle } from "./task-lifecycle.ts";
import type { CoreContext } from "./core-context.ts";
import type { ParentNotifier } from "./parent-notifier.ts";

export type RouterConfig = { idleEvents: boolean; cancelChildrenOnParentAbort: boolean };

/**
 * Feeds host events into the core: parent activity (for holding notifications), children's
 * progress and answers, completion on idle, errors, permission requests, deletions and aborts.
 * Events of sessions the plugin does not know cost a map lookup and nothing else.
 */
export class EventRouter {
  constructor(private ctx: CoreContext, private life: TaskLifecycle, private notifier: ParentNotifier, private config: RouterConfig) {}

  handle(event: HostEvent): void {
    this.trackParentActivity(event);
    // A child stopped at its budget has stopped once idle: a later prompt (the user's own) is not held.
    if (event.type === "idle") this.life.halted.delete(event.sessionID);
    if (event.type === "deleted") this.onSessionDeleted(event.sessionID);
    if (event.type === "error" && event.name === "MessageAbortedError") this.onParentAborted(event.sessionID);
    if (event.type === "message" && event.message.agent && event.message.model) {
      this.followParentModel(event.sessionID, event.message.agent, event.message.model);
    }
    if (this.life.progress.isTracked(event.sessionID)) this.onChildEvent(event);
    else if (event.type === "idle") this.ctx.log.detach(`Could not check session ${event.sessionID}`, this.life.checkAnsweredAgain(event.sessionID));
    else if (event.type === "message" && event.message.usage && event.message.completedAt !== undefined) this.onLateSpend(event.sessionID, event.message.id, event.message.usage);
  }

  /** A request of a settled task's child (a later notice woke it) still counts: one lookup per ended request of an untracked session. */
  private onLateSpend(sessionID: string, messageId: string, usage: MessageUsage): void {
    if (!this.ctx.spend || !this.ctx.store.get(sessionID)) return;
    const stop = this.ctx.spend.record(sessionID, messageId, usage);
    if (stop) this.life.stopAtBudget(stop);
  }

  private trackParentActivity(event: HostEvent): void {
    const notifier = this.notifier;
    if (event.type === "status") notifier.setActivity(event.sessionID, event.status);
    if (event.type === "idle") notifier.setActivity(event.sessionID, "idle");
    if (event.type === "idle" || (event.type === "status" && event.status === "idle")) {
      this.ctx.log.detach(`Could not notify parent session ${event.sessionID}`, notifier.deliver(event.sessionID));
    }
  }

  private onChildEvent(event: HostEvent): void {
    const { progress, answers } = this.life;
    const { clock } = this.ctx;
    const id = event.sessionID;
    const now = clock.now();
    if (event.type === "tool") {
      if (progress.recordTool(id, event.callID, event.tool, now)) this.saveProgress(id);
    } else progress.recordActivity(id, now);
    if (event.type === "message") answers.recordMessage(id, event.message);
    if (event.type === "message" && event.message.usage) this.recordSpend(id, event.message.id, event.message.usage);
    if (event.type === "text") answers.recordText(id, event.messageID, event.partID, event.text);
    if (event.type === "status") progress.setRetry(id, event.status === "retry" ? event.retry : undefined);
    if (event.type === "permission") this.onPermissionAsked(id, event.title);
    if (event.type === "permission-replied") this.onPermissionReplied(id, now);
    if (event.type === "idle" && this.config.idleEvents) this.ctx.log.detach(`Could not check task ${id}`, this.life.checkCompletion(id, true));
    if (event.type === "error") this.onChildError(id, event.name, event.message);
  }

  private recordSpend(taskId: string, messageId: string, usage: MessageUsage): void {
    const stop = this.ctx.spend?.record(taskId, messageId, usage);
    if (stop) this.life.stopAtBudget(stop);
  }

  /**
   * A new user message in a parent says which agent and model it now runs with (the user may have
   * switched). Its tasks that will still notify it take them, so a notification never switches the
   * parent back.
   */
  private followParentModel(parentID: string, agent: string, model: ModelRef): void {
    const { store } = this.ctx;
    const pending = new Set(store.pendingNotifications(parentID).map((n) => n.taskId));
    const tasks = store.list({ parentSessionID: parentID, includeCleared: true })
      .filter((t) => !isSettled(t.status) || pending.has(t.id));
    for (const summary of tasks) {
      const task = store.get(summary.id);
      if (!task) continue;
      if (task.parentAgent === agent && task.parentModel?.providerID === model.providerID && task.parentModel.modelID === model.modelID) continue;
      store.save({ ...task, parentAgent: agent, parentModel: model });
    }
  }

  private onChildError(taskId: string, name: string, message: string): void {
    if (name === "MessageAbortedError") this.life.settle(taskId, "cancelled", { error: "The child session was aborted." });
    else this.life.settle(taskId, "error", { error: message || name });
  }

  private onPermissionAsked(taskId: string, title: string): void {
    this.life.progress.setPermission(taskId, title);
    const task = this.ctx.store.get(taskId);
    if (!task) return;
    // In the event log too: the dashboard (another process) shows tasks waiting for permission.
    this.ctx.store.appendEvent({ taskId, at: this.ctx.clock.now(), kind: "permission-asked", detail: title });
    void this.ctx.host
      .toast({ title: "Background task needs permission", message: `"${task.description}" (${task.id}) is waiting for: ${title}`, variant: "warning" })
      .catch((error) => this.ctx.log.error("Could not show a toast", error));
  }

  private onPermissionReplied(taskId: string, now: number): void {
    this.life.progress.setPermission(taskId, undefined);
    if (this.ctx.store.get(taskId)) this.ctx.store.appendEvent({ taskId, at: now, kind: "permission-replied" });
  }

  private onParentAborted(sessionID: string): void {
    if (!this.config.cancelChildrenOnParentAbort) return;
    const children = this.ctx.store.list({ parentSessionID: sessionID, statuses: UNSETTLED_STATUSES, includeCleared: true });
    for (const child of queuedFirst(children)) {
      this.ctx.log.detach(`Could not cancel task ${child.id}`, this.life.cancel(child, "The parent session was aborted (cancelChildrenOnParentAbort)."));
    }
  }

  private onSessionDeleted(sessionID: string): void {
    const { store, clock } = this.ctx;
    if (this.life.progress.isTracked(sessionID)) this.life.settle(sessionID, "error", { error: "The child session was deleted." });
    const children = store.list({ parentSessionID: sessionID, includeCleared: true });
    if (children.length === 0) return;
    for (const child of queuedFirst(children)) {
      if (!isSettled(child.status)) this.ctx.log.detach(`Could not cancel task ${child.id}`, this.life.cancel(child, "The parent session was deleted."));
    }
    for (const notification of store.pendingNotifications(sessionID)) store.markDelivered(notification.id, clock.now());
    for (const child of children) store.remove(child.id);
    this.notifier.forget(sessionID);
  }

  private saveProgress(taskId: string): void {
    const { store } = this.ctx;
    const { progress } = this.life;
    const task = store.get(taskId);
    const live = progress.get(taskId);
    if (!task || !live || isSettled(task.status)) return;
    task.progress = live;
    store.save(task);
  }
}

/** Cancelling a running task frees a slot at once: queued siblings must go first, or one would start. */
function queuedFirst<T extends TaskSummary>(tasks: T[]): T[] {
  return [...tasks.filter((t) => t.status === "queued"), ...tasks.filter((t) => t.status !== "queued")];
}

import type { Clock } from "./clock.ts";
import type { Task } from "./task.ts";
import type { TaskStore } from "./task-store.ts";
import type { Host, SessionActivity } from "../host/host.ts";
import { notificationText } from "./notification-text.ts";

type NotifierDeps = {
  host: Host;
  store: TaskStore;
  clock: Clock;
  resultCap: number;
  shownId: (task: Task) => string;
  onError: (message: string, error: unknown) => void;
};

/**
 * Tells parent sessions about settled tasks, exactly once each. Notifications wait in the
 * store's outbox while the parent is busy (we never join or interrupt its run) and go out as one
 * message when it is idle. Only a notification marked `wake` starts a parent turn.
 */
export class ParentNotifier {
  private activity = new Map<string, SessionActivity>();
  private delivering = new Set<string>();
  private deliverAgain = new Set<string>();

  constructor(private deps: NotifierDeps) {}

  setActivity(sessionID: string, activity: SessionActivity): void {
    this.activity.set(sessionID, activity);
  }

  forget(sessionID: string): void {
    this.activity.delete(sessionID);
  }

  /** Puts the settle's notification in the outbox; call inside the settle's transaction, then `deliver`. */
  record(task: Task, wake: boolean): void {
    const { store, clock, resultCap, shownId } = this.deps;
    store.enqueueNotification({
      id: `${task.id}:${task.resumeCount}`,
      parentSessionID: task.parentSessionID,
      taskId: task.id,
      text: notificationText(task, shownId(task), resultCap),
      wake,
      createdAt: clock.now(),
    });
  }

  /** A note that is not a settle (e.g. a task resumed after a restart): never starts a turn. */
  recordNote(task: Task, key: string, text: string): void {
    const { store, clock } = this.deps;
    store.enqueueNotification({
      id: `${task.id}:${task.resumeCount}:${key}`,
      parentSessionID: task.parentSessionID,
      taskId: task.id,
      text,
      wake: false,
      createdAt: clock.now(),
    });
  }

  /** Parents with notifications still waiting in the outbox. */
  waitingParents(): string[] {
    return [...new Set(this.deps.store.pendingNotifications().map((n) => n.parentSessionID))];
  }

  async deliver(parentID: string): Promise<void> {
    if (this.delivering.has(parentID)) {
      this.deliverAgain.add(parentID);
      return;
    }
    this.delivering.add(parentID);
    try {
      if ((await this.parentActivity(parentID)) !== "idle") return;
      await this.sendPending(parentID);
    } catch (error) {
      this.deps.onError(`Could not notify parent session ${parentID}; will retry`, error);
    } finally {
      this.delivering.delete(parentID);
      if (this.deliverAgain.delete(parentID)) void this.deliver(parentID);
    }
  }

  /**
   * Known busy: hold without asking. Otherwise ask the host right before sending, because the
   * user may have just started a turn whose status event has not reached us yet, and a prompt to a
   * busy session would join that run.
   */
  private async parentActivity(parentID: string): Promise<SessionActivity> {
    const known = this.activity.get(parentID);
    if (known && known !== "idle") return known;
    const activity = (await this.deps.host.statuses())[parentID] ?? "idle";
    this.activity.set(parentID, activity);
    return activity;
  }

  private async sendPending(parentID: string): Promise<void> {
    const { host, store } = this.deps;
    const claimed = this.claim(parentID);
    if (claimed.length === 0) return;
    const tasks = claimed.map((n) => store.get(n.taskId)).filter((t): t is Task => t !== undefined);
    const wake = claimed.some((n) => n.wake && !alreadyRead(store.get(n.taskId)));
    const latest = tasks.at(-1);
    try {
      await host.prompt({
        sessionID: parentID,
        text: claimed.map((n) => n.text).join("\n\n"),
        agent: latest?.parentAgent ?? "build",
        model: latest?.parentModel,
        noReply: !wake,
      });
    } catch (error) {
      store.transaction(() => claimed.forEach((n) => store.markUndelivered(n.id)));
      throw error;
    }
    if (wake) this.activity.set(parentID, "busy");
    const at = this.deps.clock.now();
    for (const n of claimed) store.appendEvent({ taskId: n.taskId, at, kind: "notified", detail: wake ? "woke parent" : "no turn" });
    for (const task of new Set(tasks)) void this.toast(task);
  }

  /**
   * Takes the parent's pending notifications out of the outbox in one transaction, so that a
   * second plugin instance on the same database cannot send them too.
   */
  private claim(parentID: string) {
    const { store, clock } = this.deps;
    return store.transaction(() => {
      const pending = store.pendingNotifications(parentID);
      for (const n of pending) store.markDelivered(n.id, clock.now());
      return pending;
    });
  }

  private async toast(task: Task): Promise<void> {
    const variant = task.status === "completed" ? "success" : task.status === "error" ? "error" : "info";
    try {
      await this.deps.host.toast({ title: "Background task", message: `${task.description}: ${task.status}`, variant });
    } catch (error) {
      this.deps.onError("Could not show a toast", error);
    }
  }
}

function alreadyRead(task: Task | undefined): boolean {
  return task?.retrievedAt !== undefined && task.settledAt !== undefined && task.retrievedAt >= task.settledAt;
}

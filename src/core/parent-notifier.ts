import type { Clock } from "./clock.ts";
import type { Task } from "./task.ts";
import type { TaskStore } from "./task-store.ts";
import type { Host, SessionActivity } from "../host/host.ts";
import { notificationText } from "./notification-text.ts";

const CONFIRMED_IDLE_TRUST_MS = 250;

type NotifierDeps = {
  host: Host;
  store: TaskStore;
  clock: Clock;
  resultCap: number;
  onError: (message: string, error: unknown) => void;
};

/**
 * Tells parent sessions about settled tasks, exactly once each. Notifications wait in the
 * store's outbox while the parent is busy (we never join or interrupt its run) and go out as one
 * message when it is idle. Only a notification marked `wake` starts a parent turn.
 */
export class ParentNotifier {
  private activity = new Map<string, { state: SessionActivity; at: number }>();
  /** When the host itself last said the parent was idle (not an event): recent enough is trusted. */
  private confirmedIdleAt = new Map<string, number>();
  private delivering = new Set<string>();
  private deliverAgain = new Set<string>();

  constructor(private deps: NotifierDeps) {}

  setActivity(sessionID: string, activity: SessionActivity): void {
    this.activity.set(sessionID, { state: activity, at: this.deps.clock.now() });
    if (activity !== "idle") this.confirmedIdleAt.delete(sessionID);
  }

  /** The host's own answer to a status call made at `askedAt`, for the given parents. */
  confirmFromHost(statuses: Record<string, SessionActivity>, parents: Iterable<string>, askedAt: number): void {
    for (const parent of parents) {
      if ((this.activity.get(parent)?.at ?? -Infinity) >= askedAt) continue; // an event since then is newer
      const activity = statuses[parent] ?? "idle";
      this.setActivity(parent, activity);
      if (activity === "idle") this.confirmedIdleAt.set(parent, askedAt);
    }
  }

  /** Sessions whose activity is remembered; idle ones with nothing pending are dropped. */
  size(): number {
    return this.activity.size;
  }

  /** An idle session with nothing waiting needs no memory: every session's status passes through here. */
  private forgetIfDone(sessionID: string): void {
    if (this.activity.get(sessionID)?.state !== "idle") return;
    if (this.deps.store.pendingNotifications(sessionID).length === 0) this.forget(sessionID);
  }

  forget(sessionID: string): void {
    this.activity.delete(sessionID);
    this.confirmedIdleAt.delete(sessionID);
  }

  /** Puts the settle's notification in the outbox; call inside the settle's transaction, then `deliver`. */
  record(task: Task, wake: boolean): void {
    const { store, clock, resultCap } = this.deps;
    store.enqueueNotification({
      id: `${task.id}:${task.resumeCount}`,
      parentSessionID: task.parentSessionID,
      taskId: task.id,
      text: notificationText(task, resultCap),
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
    if (this.deps.store.pendingNotifications(parentID).length === 0) {
      this.forgetIfDone(parentID); // most idle sessions have nothing waiting: no host call for them
      return;
    }
    this.delivering.add(parentID);
    try {
      if ((await this.parentActivity(parentID)) !== "idle") return;
      await this.sendPending(parentID);
      this.forgetIfDone(parentID);
    } catch (error) {
      this.deps.onError(`Could not notify parent session ${parentID}; will retry`, error);
    } finally {
      this.delivering.delete(parentID);
      if (this.deliverAgain.delete(parentID)) void this.deliver(parentID);
    }
  }

  /**
   * Known busy: hold without asking. Otherwise ask the host right before sending, unless it said
   * "idle" a moment ago: the user may have just started a turn whose status event has not reached
   * us yet, and a prompt to a busy session would join that run.
   */
  private async parentActivity(parentID: string): Promise<SessionActivity> {
    const known = this.activity.get(parentID)?.state;
    if (known && known !== "idle") return known;
    if (this.deps.clock.now() - (this.confirmedIdleAt.get(parentID) ?? -Infinity) <= CONFIRMED_IDLE_TRUST_MS) return "idle";
    const askedAt = this.deps.clock.now();
    this.confirmFromHost(await this.deps.host.statuses(), [parentID], askedAt);
    return this.activity.get(parentID)!.state;
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
    if (wake) this.setActivity(parentID, "busy");
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
      await this.deps.host.toast({ title: "Background task", message: `${task.description} (${task.id}): ${task.status}`, variant });
    } catch (error) {
      this.deps.onError("Could not show a toast", error);
    }
  }
}

function alreadyRead(task: Task | undefined): boolean {
  return task?.retrievedAt !== undefined && task.settledAt !== undefined && task.retrievedAt >= task.settledAt;
}

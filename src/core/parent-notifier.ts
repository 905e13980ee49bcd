import type { Clock } from "./clock.ts";
import type { Task } from "./task.ts";
import type { PendingNotification, TaskStore } from "./task-store.ts";
import type { Host, HostMessage, SessionActivity } from "../host/host.ts";
import { followUpText, notificationMarker, notificationText, withMarker } from "./notification-text.ts";
import { newClaimer } from "./claims.ts";
import { fallbackLine, followUpLine, taskNoticeLine } from "./notice-line.ts";

const CONFIRMED_IDLE_TRUST_MS = 250;
/** How far back the parent is searched for a notification that may have been sent before a crash. */
const MAX_MESSAGES_SEARCHED = 800;

type NotifierDeps = {
  host: Host;
  store: TaskStore;
  clock: Clock;
  resultCap: number;
  onError: (message: string, error: unknown) => void;
  /** Who this instance is in the outbox's claims; a fresh name per instance by default. */
  claimer?: string;
};

/**
 * Tells parent sessions about settled tasks, exactly once each. Notifications wait in the
 * store's outbox while the parent is busy (we never join or interrupt its run) and go out as one
 * message when it is idle. Only a notification marked `wake` starts a parent turn. A crash between
 * claim and confirmation leaves it claimed; it is sent again only if the parent does not have it.
 */
export class ParentNotifier {
  private activity = new Map<string, { state: SessionActivity; at: number }>();
  /** When the host itself last said the parent was idle (not an event): recent enough is trusted. */
  private confirmedIdleAt = new Map<string, number>();
  private delivering = new Set<string>();
  private deliverAgain = new Set<string>();

  private readonly claimer: string;

  constructor(private deps: NotifierDeps) {
    this.claimer = deps.claimer ?? newClaimer();
  }

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
      visible: taskNoticeLine(task),
      wake,
      createdAt: clock.now(),
    });
  }

  /** A settled task's child answered again: its new answer (`task.result`), once per answer, waking the parent. */
  recordFollowUp(task: Task, answerId: string): void {
    const { store, clock, resultCap } = this.deps;
    store.enqueueNotification({
      id: `${task.id}:${task.resumeCount}:again-${answerId}`,
      parentSessionID: task.parentSessionID,
      taskId: task.id,
      text: followUpText(task, resultCap),
      visible: followUpLine(task),
      wake: true,
      createdAt: clock.now(),
    });
  }

  /** A note that is not a settle (e.g. a task resumed after a restart): never starts a turn. `visible`: the person's line. */
  recordNote(task: Task, key: string, text: string, visible?: string): void {
    const { store, clock } = this.deps;
    store.enqueueNotification({
      id: `${task.id}:${task.resumeCount}:${key}`,
      parentSessionID: task.parentSessionID,
      taskId: task.id,
      text,
      ...(visible !== undefined ? { visible } : {}),
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
      if (this.deps.store.pendingNotifications(parentID).length === 0) {
        this.forgetIfDone(parentID); // most idle sessions have nothing waiting: no host call for them
        return;
      }
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

  /**
   * Claims what is free, sends only what the parent does not already have, and confirms after the
   * host accepted it: at least once, and a notification claimed before (by an instance that died
   * or failed) is first looked for in the parent, so in effect exactly once.
   */
  private async sendPending(parentID: string): Promise<void> {
    const claimed = this.claim(parentID);
    if (claimed.length === 0) return;
    let toSend = claimed;
    try {
      const found = await this.foundInParent(parentID, claimed.filter((n) => n.claims !== undefined));
      if (found.length > 0) this.confirm(found, "found in the parent, not sent again");
      toSend = claimed.filter((n) => !found.includes(n));
      if (toSend.length > 0) await this.send(parentID, toSend);
    } catch (error) {
      this.deps.store.transaction(() => toSend.forEach((n) => this.deps.store.releaseClaim(n.id)));
      throw error;
    }
  }

  private async send(parentID: string, notifications: PendingNotification[]): Promise<void> {
    const { host, store } = this.deps;
    const tasks = notifications.map((n) => store.get(n.taskId)).filter((t): t is Task => t !== undefined);
    const wake = notifications.some((n) => n.wake && !alreadyRead(store.get(n.taskId)));
    const latest = tasks.at(-1);
    // A notification without a task (an automation run that needed no model) names them itself.
    const own = notifications.findLast((n) => n.agent !== undefined);
    // The person sees one plain line per notice; the model gets the tagged payloads (with their keys) too.
    await host.prompt({
      sessionID: parentID,
      visible: notifications.map((n) => n.visible ?? fallbackLine(n.text)).join("\n"),
      text: notifications.map((n) => withMarker(n.text, n.id)).join("\n\n"),
      agent: latest?.parentAgent ?? own?.agent ?? "build",
      model: latest ? latest.parentModel : own?.model,
      noReply: !wake,
    });
    if (wake) this.setActivity(parentID, "busy");
    this.confirm(notifications, wake ? "woke parent" : "no turn");
    for (const task of new Set(tasks)) void this.toast(task);
  }

  private confirm(notifications: PendingNotification[], detail: string): void {
    const { store, clock } = this.deps;
    const at = clock.now();
    store.transaction(() => {
      for (const n of notifications) {
        store.markDelivered(n.id, at);
        store.appendEvent({ taskId: n.taskId, at, kind: "notified", detail });
      }
    });
  }

  /**
   * Those of `retried` whose marker is in one of the parent's user messages since the oldest was
   * queued. Reads back further only when needed: usually the few newest messages hold them.
   */
  private async foundInParent(parentID: string, retried: PendingNotification[]): Promise<PendingNotification[]> {
    if (retried.length === 0) return [];
    const since = Math.min(...retried.map((n) => n.createdAt));
    let messages: HostMessage[] = [];
    for (let limit = 50; limit <= MAX_MESSAGES_SEARCHED; limit *= 4) {
      messages = await this.deps.host.recentMessages(parentID, limit);
      if (messages.length < limit || messages[0]!.createdAt < since) break;
    }
    const texts = messages.filter((m) => m.role === "user").map((m) => m.text);
    return retried.filter((n) => texts.some((text) => text.includes(notificationMarker(n.id))));
  }

  /**
   * Claims the parent's pending notifications that no other live instance holds, in one
   * transaction, so that a second instance on the same database does not send them too.
   */
  private claim(parentID: string): PendingNotification[] {
    const { store, clock } = this.deps;
    return store.transaction(() => {
      const now = clock.now();
      return store.pendingNotifications(parentID).filter((n) => store.claimNotification(n.id, this.claimer, now));
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

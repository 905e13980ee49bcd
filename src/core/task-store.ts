import type { ModelRef, Task, TaskStatus } from "./task.ts";
import type { TaskSummary } from "./task-summary.ts";
import type { Claim } from "./claims.ts";

/** One line of the append-only history: every transition and every notification sent. */
export type TaskEvent = {
  taskId: string;
  at: number;
  /** e.g. "launched", "status:completed", "resumed", "notified", "retrieved", "cleared". */
  kind: string;
  detail?: string;
};

/** A parent notification that was decided but not yet delivered (the outbox). */
export type PendingNotification = {
  id: string;
  parentSessionID: string;
  taskId: string;
  /** The payload for the parent's model (sent as a synthetic part, which a person does not see). */
  text: string;
  /** The one plain line a person sees for it (src/core/notice-line.ts); absent in rows queued before there were lines. */
  visible?: string;
  /** True when this notification should start a parent turn. */
  wake: boolean;
  createdAt: number;
  /** The parent's agent and model, for a notification whose task does not say them (an automation run without one). */
  agent?: string;
  model?: ModelRef;
  /** Set while an instance is sending it; cleared when its send failed. Ignored by enqueue. */
  claim?: { by: string; at: number };
  /** How often it was claimed, absent when never: a claimed one may have reached the parent already. */
  claims?: number;
};

export type TaskFilter = {
  parentSessionID?: string;
  statuses?: readonly TaskStatus[];
  /** Tasks hidden by background_clear are left out unless this is true. */
  includeCleared?: boolean;
};

/**
 * Where tasks live. Synchronous on purpose: both SQLite drivers are, and it keeps the core simple.
 * Contract: `get` and `list` return copies (mutating them changes nothing stored); `save` is an
 * upsert of the whole task; every method is scoped to the project the store was opened for.
 */
export interface TaskStore {
  save(task: Task): void;
  get(id: string): Task | undefined;
  /** Summaries, oldest first: the prompt, result and error are read with `get`. */
  list(filter?: TaskFilter): TaskSummary[];
  /** Removes the task with its events and notifications, all or nothing. */
  remove(id: string): void;
  /** Secrets in `detail` (API keys, tokens, private keys) are masked before it is kept. */
  appendEvent(event: TaskEvent): void;
  events(taskId: string): TaskEvent[];
  enqueueNotification(notification: PendingNotification): void;
  pendingNotifications(parentSessionID?: string): PendingNotification[];
  /** Confirmed: the host accepted it (or it was found in the parent). It leaves the outbox. */
  markDelivered(notificationId: string, at: number): void;
  /**
   * Claims a pending notification for `by` to send (counts the claim) when no other live instance
   * holds it (core/claims.ts, LEASES.outboxMs; `by`'s own claim counts as free). True when `by`
   * holds it now; it stays pending until confirmed.
   */
  claimNotification(notificationId: string, by: string, at: number): boolean;
  /** Drops the claim (the send failed); the claim count stays. */
  releaseClaim(notificationId: string): void;
  /**
   * Takes a running task for `by` (the instance that drives its child): when it has no owner, is
   * already `by`'s, or its owner's claim is no longer live within `leaseMs` (core/claims.ts).
   * True when `by` holds it now. A task that does not run is never claimed.
   */
  claimTask(id: string, by: string, now: number, leaseMs: number): boolean;
  /** Renews `by`'s claims on its running tasks in one write; returns the ids it still holds (one taken over is not among them). */
  renewTaskClaims(by: string, now: number): Set<string>;
  /** Lets go of `by`'s claim on the task (settled, or the instance stops); `id` undefined: every task `by` holds. */
  releaseTask(id: string | undefined, by: string): void;
  /** Who drives the task's child; undefined when nobody does. */
  taskClaim(id: string): Claim | undefined;
  /** Runs fn as one write transaction: all of it is committed, or none. Serialises writers across connections. */
  transaction<T>(fn: () => T): T;
  close(): void;
}

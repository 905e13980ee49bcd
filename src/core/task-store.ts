import type { Task, TaskStatus } from "./task.ts";

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
  /** The text to put in the parent session. */
  text: string;
  /** True when this notification should start a parent turn. */
  wake: boolean;
  createdAt: number;
};

export type TaskFilter = {
  parentSessionID?: string;
  statuses?: TaskStatus[];
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
  list(filter?: TaskFilter): Task[];
  remove(id: string): void;
  appendEvent(event: TaskEvent): void;
  events(taskId: string): TaskEvent[];
  enqueueNotification(notification: PendingNotification): void;
  pendingNotifications(parentSessionID?: string): PendingNotification[];
  markDelivered(notificationId: string, at: number): void;
  /** Puts a claimed notification back in the outbox (its delivery failed). */
  markUndelivered(notificationId: string): void;
  /** Runs fn as one write transaction: all of it is committed, or none. Serialises writers across connections. */
  transaction<T>(fn: () => T): T;
  close(): void;
}

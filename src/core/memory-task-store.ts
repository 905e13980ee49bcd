import type { Task } from "./task.ts";
import { summaryOf, type TaskSummary } from "./task-summary.ts";
import type { PendingNotification, TaskEvent, TaskFilter, TaskStore } from "./task-store.ts";
import { maskSecrets } from "./mask-secrets.ts";
import { LEASES, mayTake, type Claim } from "./claims.ts";
import { RUNNING_STATUSES } from "./task.ts";

const copy = <T>(value: T): T => structuredClone(value);

/** The TaskStore for unit tests, and the fallback when no database is configured. */
export class MemoryTaskStore implements TaskStore {
  private tasks = new Map<string, Task>();
  private log: TaskEvent[] = [];
  private outbox = new Map<string, PendingNotification>();
  private delivered = new Map<string, PendingNotification>();
  /** The task claims, as the tasks table's claimed_by / claimed_at hold them. */
  private owners = new Map<string, Claim>();

  save(task: Task): void {
    this.tasks.set(task.id, copy(task));
  }

  get(id: string): Task | undefined {
    const task = this.tasks.get(id);
    return task && copy(task);
  }

  list(filter: TaskFilter = {}): TaskSummary[] {
    return [...this.tasks.values()]
      .filter((t) => !filter.parentSessionID || t.parentSessionID === filter.parentSessionID)
      .filter((t) => !filter.statuses || filter.statuses.includes(t.status))
      .filter((t) => filter.includeCleared || t.clearedAt === undefined)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((t) => summaryOf(copy(t)));
  }

  remove(id: string): void {
    this.tasks.delete(id);
    this.log = this.log.filter((e) => e.taskId !== id);
    for (const box of [this.outbox, this.delivered]) {
      for (const [key, n] of box) if (n.taskId === id) box.delete(key);
    }
  }

  appendEvent(event: TaskEvent): void {
    this.log.push(event.detail === undefined ? copy(event) : { ...event, detail: maskSecrets(event.detail) });
  }

  events(taskId: string): TaskEvent[] {
    return this.log.filter((e) => e.taskId === taskId).map(copy);
  }

  enqueueNotification(notification: PendingNotification): void {
    if (this.delivered.has(notification.id)) return;
    const { claim, claims } = this.outbox.get(notification.id) ?? {};
    const { claim: _claim, claims: _claims, ...fields } = copy(notification);
    this.outbox.set(notification.id, { ...fields, ...(claim && { claim }), ...(claims && { claims }) });
  }

  pendingNotifications(parentSessionID?: string): PendingNotification[] {
    return [...this.outbox.values()]
      .filter((n) => !parentSessionID || n.parentSessionID === parentSessionID)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(copy);
  }

  markDelivered(notificationId: string): void {
    const notification = this.outbox.get(notificationId);
    if (!notification) return;
    this.outbox.delete(notificationId);
    this.delivered.set(notificationId, notification);
  }

  claimNotification(notificationId: string, by: string, at: number): boolean {
    const notification = this.outbox.get(notificationId);
    if (!notification || !mayTake(notification.claim, by, at, LEASES.outboxMs)) return false;
    notification.claim = { by, at };
    notification.claims = (notification.claims ?? 0) + 1;
    return true;
  }

  releaseClaim(notificationId: string): void {
    delete this.outbox.get(notificationId)?.claim;
  }

  claimTask(id: string, by: string, now: number, leaseMs: number): boolean {
    if (!this.runs(id) || !mayTake(this.owners.get(id), by, now, leaseMs)) return false;
    this.owners.set(id, { by, at: now });
    return true;
  }

  renewTaskClaims(by: string, now: number): Set<string> {
    const held = [...this.owners].filter(([id, claim]) => claim.by === by && this.runs(id)).map(([id]) => id);
    for (const id of held) this.owners.set(id, { by, at: now });
    return new Set(held);
  }

  releaseTask(id: string | undefined, by: string): void {
    for (const [key, claim] of this.owners) if ((id === undefined || key === id) && claim.by === by) this.owners.delete(key);
  }

  taskClaim(id: string): Claim | undefined {
    const claim = this.owners.get(id);
    return claim && { ...claim };
  }

  private runs(id: string): boolean {
    const task = this.tasks.get(id);
    return !!task && RUNNING_STATUSES.includes(task.status);
  }

  transaction<T>(fn: () => T): T {
    const before = structuredClone({ tasks: this.tasks, log: this.log, outbox: this.outbox, delivered: this.delivered, owners: this.owners });
    try {
      return fn();
    } catch (error) {
      Object.assign(this, before);
      throw error;
    }
  }

  close(): void {}
}

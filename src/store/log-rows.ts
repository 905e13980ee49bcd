import type { PendingNotification, TaskEvent } from "../core/task-store.ts";
import type { ModelRef } from "../core/task.ts";
import type { SqlRow } from "./sqlite-driver.ts";

/** Row mapping for the event log and the notification outbox. */

export function rowToEvent(row: SqlRow): TaskEvent {
  const event: TaskEvent = { taskId: row.task_id as string, at: row.at as number, kind: row.kind as string };
  if (row.detail !== null) event.detail = row.detail as string;
  return event;
}

export function rowToNotification(row: SqlRow): PendingNotification {
  const notification: PendingNotification = {
    id: row.id as string,
    parentSessionID: row.parent_session_id as string,
    taskId: row.task_id as string,
    text: row.text as string,
    wake: row.wake === 1,
    createdAt: row.created_at as number,
  };
  if (row.claimed_at != null) notification.claim = { by: row.claimed_by as string, at: row.claimed_at as number };
  if (Number(row.claims ?? 0) > 0) notification.claims = Number(row.claims);
  if (typeof row.agent === "string") notification.agent = row.agent;
  if (typeof row.model === "string") notification.model = JSON.parse(row.model) as ModelRef;
  if (typeof row.visible === "string") notification.visible = row.visible;
  return notification;
}

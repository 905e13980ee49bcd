import type { TaskSummary } from "./task-summary.ts";

const SESSION_PREFIX = "ses_";

export type Lookup =
  | { kind: "tasks"; tasks: TaskSummary[]; batchId?: string }
  | { kind: "none"; message: string }
  | { kind: "ambiguous"; message: string };

/** Finds the tasks an id names: a task id or batch id, whole or any unique prefix, `ses_` optional. */
export function lookupTasks(rawId: string, tasks: TaskSummary[]): Lookup {
  const id = rawId.trim();
  if (!id) return { kind: "none", message: "task_id is empty. Pass an id shown by background_list." };
  const sessionId = id.startsWith(SESSION_PREFIX) ? id : SESSION_PREFIX + id;
  const exact = tasks.find((t) => t.id === sessionId);
  if (exact) return { kind: "tasks", tasks: [exact] };
  const byTask = tasks.filter((t) => t.id.startsWith(sessionId));
  if (byTask.length === 1) return { kind: "tasks", tasks: byTask };
  if (byTask.length > 1) return ambiguous(id, byTask.map((t) => `${t.id} (${t.description})`));
  const batchIds = [...new Set(tasks.map((t) => t.batchId).filter((b) => b.startsWith(id)))];
  if (batchIds.length === 1) {
    return { kind: "tasks", tasks: tasks.filter((t) => t.batchId === batchIds[0]), batchId: batchIds[0] };
  }
  if (batchIds.length > 1) return ambiguous(id, batchIds.map((b) => `${b} (batch)`));
  return {
    kind: "none",
    message: `No background task or batch matches "${id}". Call background_list to see this session's task ids.`,
  };
}

function ambiguous(id: string, candidates: string[]): Lookup {
  return {
    kind: "ambiguous",
    message: `"${id}" matches more than one: ${candidates.join(", ")}. Pass a longer prefix.`,
  };
}

import type { TaskManager } from "../core/task-manager.ts";
import { TaskError } from "../core/errors.ts";
import { isSettled, type Task, type TaskWorktree } from "../core/task.ts";

const GONE = { merge: "merged", discard: "discarded", clear: "removed when the task was cleared" } as const;

/**
 * The task `taskId` names among those the caller may act on (manager.scopeOf: a child, or an
 * OpenCode subagent session under one, only its own tree), with a worktree of its own still there
 * to act on; else a refusal that says why. A task outside the caller's tree answers as an unknown id.
 */
export async function isolatedTask(manager: TaskManager, taskId: string, callerSessionID: string): Promise<Task & { worktree: TaskWorktree }> {
  const found = manager.lookup(taskId, await manager.scopeOf(callerSessionID));
  if (found.kind !== "tasks") throw new TaskError(found.message);
  if (found.batchId) throw new TaskError(`"${taskId}" names a batch; pass one task id.`);
  const task = manager.get(found.tasks[0].id);
  if (!task) throw new TaskError(`Task ${found.tasks[0].id} no longer exists.`);
  const { worktree } = task;
  if (!worktree) throw new TaskError(noWorktree(manager, task));
  if (worktree.removed && !worktree.removed.branchKept) {
    throw new TaskError(`Task ${task.id}'s branch ${worktree.branch} was ${GONE[worktree.removed.by]}, with its worktree; nothing is left to act on.`);
  }
  return { ...task, worktree };
}

/**
 * A background child may act only on tasks below it: an unattended model must not merge or
 * discard a sibling's work. A second check after `isolatedTask`'s scoped lookup (which also sees
 * through OpenCode subagent sessions); a session that is not a task passes here.
 */
export function refuseOutsideCaller(manager: TaskManager, task: Task, callerSessionID: string): void {
  if (!manager.get(callerSessionID)) return;
  for (let up: Task | undefined = task, n = 0; up && n < 32; up = manager.get(up.parentSessionID), n++) {
    if (up.parentSessionID === callerSessionID) return;
  }
  throw new TaskError(`This session is background task ${callerSessionID}: it may act only on tasks it launched, and task ${task.id} is not one. Nothing was changed.`);
}

/** Nothing is done while the task, or a task it launched (which works in the same worktree), still runs. */
export function refuseWhileWorking(manager: TaskManager, task: Task, action: string): void {
  if (!isSettled(task.status)) {
    throw new TaskError(`Task ${task.id} is still ${task.status}. Wait for its result (background_output) or cancel it (background_cancel), then ${action} again. Nothing was changed.`);
  }
  const busy = manager.tasksBelow(task.id).find(({ task: t }) => !isSettled(t.status))?.task;
  if (busy) throw new TaskError(`Task ${busy.id}, launched by task ${task.id}, still works in its worktree. Wait for it or cancel it, then ${action} again. Nothing was changed.`);
}

function noWorktree(manager: TaskManager, task: Task): string {
  for (let up = manager.get(task.parentSessionID), n = 0; up && n < 32; up = manager.get(up.parentSessionID), n++) {
    if (up.worktree) return `Task ${task.id} works in the worktree of task ${up.id}, which launched it: use task_id "${up.id}".`;
  }
  return `Task ${task.id} has no worktree: it was not launched with isolation "worktree", so its changes are already in your checkout.`;
}

import type { Task, TaskWorktree } from "./task.ts";
import type { TaskStore } from "./task-store.ts";

/**
 * The git side of isolation, given to the manager by the composition root (src/worktrees does the
 * work): the core only decides when. Every method may throw; `create` throws a refusal (a message
 * that names the fix) for a project that is not a git repository.
 */
export type WorktreeSupport = {
  /** A new worktree for a child about to be created, of the project's HEAD or its default branch's latest commit. */
  create(description: string, from: WorktreeBase): Promise<TaskWorktree>;
  /** Its branch named after the task, once the session (whose id is the task id) exists. */
  name(worktree: TaskWorktree, taskId: string, description: string): Promise<TaskWorktree>;
  /** Removes a worktree whose child was never created. */
  remove(worktree: TaskWorktree): Promise<void>;
  /**
   * Commits the child's uncommitted work; the short block its result shows (branch, commits, diff
   * stat). Throws WorktreeTamperedError, committing nothing, when the child rewrote its worktree's
   * `.git`: the task then settles as an error with that message.
   */
  settle(task: Task): Promise<string>;
};

/** The child rewrote its worktree's git link; the message starts `worktree_tampered:` and names what was found. */
export class WorktreeTamperedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorktreeTampered";
  }
}

/** What a new worktree starts from: the checkout's HEAD (a task) or the default branch (an automation run). */
export type WorktreeBase = "head" | "default-branch";

/** How many task levels are walked up at most (maxDepth is far below it). */
const MAX_WALK = 32;

/** The directory a session works in: its worktree's (see worktreeOf); undefined: the project's own. */
export function workdirOf(store: Pick<TaskStore, "get">, sessionID: string): string | undefined {
  const worktree = worktreeOf(store, sessionID);
  return worktree && (worktree.workdir ?? worktree.path);
}

/**
 * The worktree a session works in: its task's own, else that of the task whose child launched it
 * (a nested task runs in its parent's worktree); undefined: the project's own checkout.
 */
export function worktreeOf(store: Pick<TaskStore, "get">, sessionID: string): TaskWorktree | undefined {
  let id = sessionID;
  for (let i = 0; i < MAX_WALK; i++) {
    const task = store.get(id);
    if (!task) return undefined;
    if (task.worktree) return task.worktree;
    id = task.parentSessionID;
  }
  return undefined;
}

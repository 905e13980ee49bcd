import { errorMessage } from "../core/errors.ts";
import { SETTLED_STATUSES, type TaskWorktree } from "../core/task.ts";
import type { TaskStore } from "../core/task-store.ts";
import { loadWorktrees } from "../worktrees/load-worktrees.ts";
import { worktreeRoutes } from "./worktree-support.ts";

type Log = (level: "info" | "warn", message: string) => void;

/**
 * Retention's share of worktrees: the worktrees of the settled tasks it is about to purge (settled
 * before `cutoffMs`) go too, each branch with them unless it holds commits not merged into the
 * checkout (kept, and logged: `opencode-errands worktrees` lists it). Reads the tasks now, before
 * their rows go; removes afterwards, one at a time. A worktree a running task works in is kept.
 */
export function removeExpiredWorktrees(tasks: TaskStore, cutoffMs: number, log: Log): Promise<void> {
  const inUse = new Set(worktreeRoutes(tasks).directoriesInUse());
  const expired = tasks.list({ statuses: SETTLED_STATUSES, includeCleared: true })
    .filter((t) => t.settledAt !== undefined && t.settledAt < cutoffMs && t.worktree && !t.worktree.removed)
    .map((t) => ({ id: t.id, worktree: t.worktree! }));
  return removeAll(expired, inUse, log);
}

async function removeAll(expired: { id: string; worktree: TaskWorktree }[], inUse: Set<string>, log: Log): Promise<void> {
  if (expired.length === 0) return;
  const { removeWorktree, unmergedCommitCount } = await loadWorktrees();
  for (const { id, worktree } of expired) {
    if (inUse.has(worktree.path)) {
      log("warn", `Retention kept the worktree ${worktree.path} of task ${id}: a running task works in it.`);
      continue;
    }
    try {
      const { branchDeleted } = await removeWorktree(worktree, { deleteBranch: "if-merged" });
      if (branchDeleted) continue;
      const commits = await unmergedCommitCount(worktree);
      log("info", `Retention removed the worktree of task ${id} but kept its branch ${worktree.branch} in ${worktree.repo}: ${commits} commit(s) not merged. Merge or delete it; \`opencode-errands worktrees\` lists it.`);
    } catch (error) {
      log("warn", `Retention could not remove the worktree ${worktree.path} of task ${id} (${errorMessage(error)}); \`opencode-errands worktrees --prune\` removes it.`);
    }
  }
}

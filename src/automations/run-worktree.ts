import type { Task } from "../core/task.ts";
import { removeWorktree, settleWorktree } from "../worktrees/worktrees.ts";

/**
 * After an isolated run's task settled: its work committed (a cancelled child's too), then the
 * branch it leaves, or undefined when the run changed nothing: its worktree and branch are
 * removed, so a run that did nothing leaves nothing behind.
 */
export async function branchLeftBy(task: Task): Promise<string | undefined> {
  const { path, branch, base, repo } = task.worktree!;
  const worktree = { path, branch, base, repo };
  const changes = await settleWorktree(worktree, `task ${task.id} "${task.description}"`);
  if (changes.changed) return branch;
  await removeWorktree(worktree, { deleteBranch: true });
  return undefined;
}

import type { Task, TaskWorktree } from "../core/task.ts";
import { loadWorktrees } from "../worktrees/load-worktrees.ts";
import { WorktreeTampered, type Worktree, type WorktreeChanges } from "../worktrees/worktree.ts";

/**
 * After an isolated run's task settled: its work committed (a cancelled child's too), then the
 * branch it leaves, or undefined when the run changed nothing: its worktree and branch are
 * removed, so a run that did nothing leaves nothing behind.
 */
export async function branchLeftBy(task: Task): Promise<string | undefined> {
  const { removeWorktree } = await loadWorktrees();
  const { path, branch, base, repo } = task.worktree!;
  const worktree = { path, branch, base, repo };
  const changes = await settledOrAsIs(worktree, `task ${task.id} "${task.description}"`);
  if (changes.changed) return branch;
  await removeWorktree(worktree, { deleteBranch: true });
  return undefined;
}

/**
 * After an isolated run that ended without a task (steps only, or its task never started): its
 * work committed as one commit, the branch named after the run and kept only when something
 * changed; the worktree's directory always goes (no task holds it). Returns the branch kept.
 */
export async function branchLeftByRun(made: TaskWorktree, runId: number, description: string): Promise<string | undefined> {
  const { settleWorktree, removeWorktree, nameBranch } = await loadWorktrees();
  const { path, branch, base, repo } = made;
  const worktree = { path, branch, base, repo };
  // A .git rewritten by a step throws (worktree_tampered): the run logs it and keeps the branch.
  const changes = await settleWorktree(worktree, `automation run ${runId} "${description}"`);
  if (!changes.changed) {
    await removeWorktree(worktree, { deleteBranch: true });
    return undefined;
  }
  // A branch that cannot be renamed keeps its first name: the work is on it all the same.
  const named = await nameBranch(worktree, `run${runId}`, description).catch(() => worktree);
  await removeWorktree(named, { deleteBranch: false });
  return named.branch;
}

/**
 * The worktree settled; one whose `.git` was rewritten (its task already settled as an error
 * saying so) is not: its branch is judged by what was committed on it before.
 */
async function settledOrAsIs(worktree: Worktree, label: string): Promise<WorktreeChanges> {
  const { settleWorktree, branchChanges } = await loadWorktrees();
  return settleWorktree(worktree, label).catch((error) => {
    if (error instanceof WorktreeTampered) return branchChanges(worktree);
    throw error;
  });
}

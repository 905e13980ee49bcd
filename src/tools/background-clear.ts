import type { Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import { errorMessage } from "../core/errors.ts";
import { isSettled } from "../core/task.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import { loadWorktrees } from "../worktrees/load-worktrees.ts";
import { defineTool } from "./tool-kit.ts";

type Deps = { manager: TaskManager; clock: Clock; onCrash: (message: string, error: unknown) => void };

export function backgroundClearTool({ manager, clock, onCrash }: Deps) {
  return defineTool({
    name: "background_clear",
    description: "Hide finished tasks from background_list.",
    args: () => ({}),
    onCrash,
    async run(_args, call) {
      const launchers = manager.launchersFor(call.sessionID, await manager.scopeOf(call.sessionID));
      const isolated = launchers.flatMap((l) => manager.listForParent(l)).filter((t) => isSettled(t.status) && t.worktree && !t.worktree.removed);
      const outcomes = launchers.map((l) => manager.clear(l));
      const cleared = outcomes.reduce((n, o) => n + o.cleared, 0);
      const running = outcomes.flatMap((o) => o.running);
      const head = `Cleared ${cleared} finished task${cleared === 1 ? "" : "s"}.`;
      const worktrees = await removeWorktrees(manager, clock, isolated);
      if (running.length === 0) return [head, ...worktrees].join("\n");
      const ids = running.map((t) => t.id).join(", ");
      return [`${head} ${running.length} still running (${ids}), left in the list; cancel them with background_cancel if they are no longer needed.`, ...worktrees].join("\n");
    },
  });
}

/**
 * Removes the worktrees of cleared isolated tasks. A branch with commits not merged into the
 * checkout stays (the answer names it, background_merge still acts on it); a worktree a task the
 * cleared one launched still works in stays as it is.
 */
async function removeWorktrees(manager: TaskManager, clock: Clock, tasks: TaskSummary[]): Promise<string[]> {
  const lines: string[] = [];
  if (tasks.length === 0) return lines;
  const { removeWorktree, unmergedCommitCount } = await loadWorktrees();
  let removed = 0;
  for (const task of tasks) {
    const wt = task.worktree!;
    if (manager.tasksBelow(task.id).some(({ task: t }) => !isSettled(t.status))) {
      lines.push(`Kept the worktree of task ${task.id}: a task it launched still works in it.`);
      continue;
    }
    try {
      const { branchDeleted } = await removeWorktree(wt, { deleteBranch: "if-merged" });
      manager.recordWorktreeRemoval(task.id, { at: clock.now(), by: "clear", branchKept: !branchDeleted });
      removed++;
      if (!branchDeleted) lines.push(keptBranch(task.id, wt.branch, await unmergedCommitCount(wt)));
    } catch (error) {
      lines.push(`Could not remove the worktree of task ${task.id} (${errorMessage(error)}); it stays at ${wt.path}.`);
    }
  }
  if (removed > 0) lines.unshift(`Removed ${removed} worktree${removed === 1 ? "" : "s"}.`);
  return lines;
}

const keptBranch = (taskId: string, branch: string, commits: number) =>
  `Kept branch ${branch} of task ${taskId}: ${commits} commit${commits === 1 ? "" : "s"} not merged. background_merge merges or discards it.`;

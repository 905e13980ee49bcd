import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { TaskError } from "../core/errors.ts";
import { RUNNING_STATUSES, type Task, type TaskWorktree } from "../core/task.ts";
import type { TaskStore } from "../core/task-store.ts";
import { workdirOf, WorktreeTamperedError, type WorktreeSupport } from "../core/task-worktree.ts";
import type { DirectoryRoutes } from "../host/directory-route.ts";
import { loadWorktrees } from "../worktrees/load-worktrees.ts";
import { WorktreeRefusal, WorktreeTampered, type Worktree, type WorktreeChanges } from "../worktrees/worktree.ts";

/** The most commits and diff-stat lines a result's Worktree block lists (background_merge diff shows all). */
const MAX_COMMITS = 10;
const MAX_STAT_LINES = 15;

/** Where each session works, read from the tasks: its own worktree or its launcher's. */
export function worktreeRoutes(tasks: TaskStore): DirectoryRoutes {
  return {
    directoryOf: (sessionID) => workdirOf(tasks, sessionID),
    directoriesInUse: () => tasks.list({ statuses: RUNNING_STATUSES, includeCleared: true })
      .flatMap((t) => (t.worktree ? t.worktree.workdir ?? t.worktree.path : workdirOf(tasks, t.parentSessionID)) ?? []),
  };
}

/**
 * The core's isolation port on src/worktrees: worktrees of the project under `root`. Its git
 * commands run one at a time: two launches at once both write the repository's config (the base,
 * the branch rename), and git refuses a config file another command holds locked.
 */
export function worktreeSupport(projectDir: string, root: () => string, warmDirectory?: (directory: string) => Promise<void>): WorktreeSupport {
  const one = serially();
  // A spare's directory is where its task will work: the host boots its instance for it ahead (the project's subfolder in it, if any).
  const warm = warmDirectory && (async (path: string) => {
    const sub = subfolderOf(projectDir, await (await loadWorktrees()).mainCheckout(projectDir));
    await warmDirectory(sub ? join(path, sub) : path);
  });
  return {
    create: (description, from) => one(async () => {
      try {
        const { createWorktree } = await loadWorktrees();
        return fromGit(await createWorktree({ repo: projectDir, root: root(), description, from, spare: true, warm }), projectDir);
      } catch (error) {
        // The refusal names the fix (not a git repository): the tool answers it, nothing was made.
        if (error instanceof WorktreeRefusal) throw new TaskError(error.message);
        throw error;
      }
    }),
    name: (worktree, taskId, description) => one(async () => {
      const { nameBranch } = await loadWorktrees();
      return { ...worktree, branch: (await nameBranch(worktree, shortTaskId(taskId), description)).branch };
    }),
    remove: (worktree) => one(async () => {
      await (await loadWorktrees()).removeWorktree(worktree, { deleteBranch: true });
    }),
    settle: (task: Task) => one(async () => {
      try {
        return changesBlock(await (await loadWorktrees()).settleWorktree(task.worktree!, `task ${task.id} "${task.description}"`));
      } catch (error) {
        if (error instanceof WorktreeTampered) throw new WorktreeTamperedError(error.message);
        throw error;
      }
    }),
  };
}

/** Runs the given work one after another, in call order; a failure does not stop the next. */
function serially(): <T>(work: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = last.then(work, work);
    last = next.catch(() => undefined);
    return next;
  };
}

/** The task id without its `ses_` prefix, cut to what tells tasks apart in a branch name. */
export function shortTaskId(taskId: string): string {
  return taskId.replace(/^ses_/, "").slice(0, 12);
}

/** The result's short Worktree block: branch, the commits on it, `git diff --stat` against the base. */
export function changesBlock(changes: WorktreeChanges): string {
  if (!changes.changed) return `Worktree: branch ${changes.branch}, no changes.`;
  const commits = changes.commits.slice(0, MAX_COMMITS).map((c) => `  ${c.sha.slice(0, 7)} ${c.subject}`);
  if (changes.commits.length > MAX_COMMITS) commits.push(`  … ${changes.commits.length - MAX_COMMITS} more`);
  const stat = changes.diffStat.trimEnd().split("\n");
  const shown = stat.length > MAX_STAT_LINES ? [...stat.slice(0, MAX_STAT_LINES - 1), "  …", stat.at(-1)!] : stat;
  return [`Worktree: branch ${changes.branch}, ${changes.commits.length} commit(s):`, ...commits, ...shown].join("\n");
}

/**
 * The task's record of a new worktree. A project that is a subfolder of its repository (OpenCode
 * opened in a package of a monorepo) has its child work in the same subfolder of the worktree.
 */
function fromGit({ path, branch, base, repo }: Worktree, projectDir: string): TaskWorktree {
  const sub = subfolderOf(projectDir, repo);
  const workdir = sub ? join(path, sub) : undefined;
  return { path, branch, base, repo, ...(workdir && existsSync(workdir) ? { workdir } : {}) };
}

/** Where the project is inside its repository's checkout; undefined at its top. */
function subfolderOf(projectDir: string, repo: string): string | undefined {
  const sub = relative(real(repo), real(projectDir));
  return sub && !sub.startsWith("..") && !isAbsolute(sub) ? sub : undefined;
}

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

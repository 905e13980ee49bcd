import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { git } from "./git.ts";
import { oneAtATime } from "./repo-lock.ts";
import { commitUncommitted, hasUnmergedCommits, untampered } from "./settle-worktree.ts";
import { WorktreeTampered, type Worktree } from "./worktree.ts";

/**
 * Removes the worktree's directory. The branch: deleted (`true`, commits and all: the caller was
 * told to discard), kept (`false`), or deleted only when it holds no commit the main checkout's HEAD
 * lacks (`"if-merged"`). Whenever the branch may stay, uncommitted work is first committed on it,
 * so removing never loses work silently. Returns whether the branch was deleted.
 */
export async function removeWorktree(wt: Worktree, opts: { deleteBranch: boolean | "if-merged" }): Promise<{ branchDeleted: boolean }> {
  return oneAtATime(wt.repo, () => remove(wt, opts));
}

async function remove(wt: Worktree, opts: { deleteBranch: boolean | "if-merged" }): Promise<{ branchDeleted: boolean }> {
  const live = existsSync(wt.path);
  if (!existsSync(wt.repo)) {
    await rm(wt.path, { recursive: true, force: true });
    return { branchDeleted: false };
  }
  if (live && opts.deleteBranch !== true) await saveUncommitted(wt);
  // git refuses to remove a worktree whose .git the child rewrote: its directory goes all the same.
  const removed = live && (await git(wt.repo, ["worktree", "remove", "--force", "--force", wt.path]).then(() => true, () => false));
  if (!removed) {
    await rm(wt.path, { recursive: true, force: true });
    await git(wt.repo, ["worktree", "prune"]);
  }
  const drop = opts.deleteBranch === true || (opts.deleteBranch === "if-merged" && !(await hasUnmergedCommits(wt)));
  if (!drop) return { branchDeleted: false };
  const deleted = await git(wt.repo, ["branch", "--quiet", "-D", wt.branch], { okCodes: [1] });
  return { branchDeleted: deleted.code === 0 };
}

/** Commits the worktree's uncommitted work on its branch; a worktree whose .git the child rewrote is not read (its settle said so). */
async function saveUncommitted(wt: Worktree): Promise<void> {
  const wtGit = await untampered(wt).catch((error) => {
    if (error instanceof WorktreeTampered) return undefined;
    throw error;
  });
  if (wtGit) await commitUncommitted(wtGit, `work in progress, saved when its worktree was removed`);
}

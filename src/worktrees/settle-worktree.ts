import { existsSync } from "node:fs";
import { DIFF_SAFE, git, gitOut, NO_SUBMODULES } from "./git.ts";
import { assertUntampered, worktreeGit, type WorktreeGit } from "./worktree-git.ts";
import type { Worktree, WorktreeChanges } from "./worktree.ts";

/**
 * Commits the worktree's uncommitted work (untracked files included, ignored ones not) as one
 * "work in progress of <taskLabel>" commit on its branch, so nothing is lost when the worktree
 * goes, and says what the branch holds against its base. Hooks are skipped: the save must not fail.
 * Throws WorktreeTampered, committing nothing, when the child rewrote the worktree's `.git`.
 */
export async function settleWorktree(wt: Worktree, taskLabel: string): Promise<WorktreeChanges> {
  if (existsSync(wt.path)) await commitUncommitted(await untampered(wt), `work in progress of ${taskLabel}`);
  return branchChanges(wt);
}

/** Git pinned to the worktree, once its `.git` is checked to be what git wrote. */
export async function untampered(wt: Pick<Worktree, "path" | "repo">): Promise<WorktreeGit> {
  const pinned = await worktreeGit(wt);
  await assertUntampered(wt, pinned.gitDir);
  return pinned;
}

/** Commits everything uncommitted in the worktree; false when there was nothing. */
export async function commitUncommitted(wtGit: WorktreeGit, message: string): Promise<boolean> {
  await wtGit.run(["add", "--all"]);
  const staged = await wtGit.run(["diff", "--cached", "--quiet", NO_SUBMODULES], { okCodes: [1] });
  if (staged.code === 0) return false;
  await wtGit.committing(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message]);
  return true;
}

/** The branch's commits since its base (oldest first) and `git diff --stat` of base..branch. */
export async function branchChanges(wt: Worktree): Promise<WorktreeChanges> {
  const log = await gitOut(wt.repo, ["log", "--reverse", "--format=%H%x09%s", `${wt.base}..refs/heads/${wt.branch}`, "--"]);
  const commits = log ? log.split("\n").map((line) => {
    const tab = line.indexOf("\t");
    return { sha: line.slice(0, tab), subject: line.slice(tab + 1) };
  }) : [];
  const diffStat = commits.length ? await gitOut(wt.repo, ["diff", "--stat", wt.base, `refs/heads/${wt.branch}`, "--"]) : "";
  return { branch: wt.branch, commits, diffStat, changed: commits.length > 0 };
}

/**
 * Whether the branch holds commits the main checkout's current HEAD does not: work that would be
 * lost if the branch were deleted. A branch that is gone holds nothing.
 */
export async function hasUnmergedCommits(wt: Worktree): Promise<boolean> {
  return (await unmergedCommitCount(wt)) > 0;
}

/** How many commits of the branch the main checkout's current HEAD lacks (0 when the branch is gone). */
export async function unmergedCommitCount(wt: Worktree): Promise<number> {
  const exists = await git(wt.repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${wt.branch}`], { okCodes: [1] });
  if (exists.code !== 0) return 0;
  return Number(await gitOut(wt.repo, ["rev-list", "--count", `HEAD..refs/heads/${wt.branch}`, "--"]));
}

/**
 * The full diff of the worktree against its base, capped at `maxChars` (cut at a line end), with
 * the git command that shows all of it. While the directory exists, uncommitted tracked changes are
 * in it and untracked files are listed after it.
 */
export async function worktreeDiff(wt: Worktree, maxChars: number): Promise<{ text: string; truncated: boolean; seeRest: string }> {
  const live = existsSync(wt.path) ? await worktreeGit(wt) : undefined;
  const diff = live
    ? await live.out(["diff", ...DIFF_SAFE, NO_SUBMODULES, wt.base, "--"])
    : await gitOut(wt.repo, ["diff", ...DIFF_SAFE, wt.base, `refs/heads/${wt.branch}`, "--"]);
  const untracked = live ? await live.out(["ls-files", "--others", "--exclude-standard"]) : "";
  const full = untracked ? `${diff}\n\nUntracked files (not in the diff until committed):\n${untracked}` : diff;
  const seeRest = live ? `git -C ${quote(wt.path)} diff ${wt.base}` : `git -C ${quote(wt.repo)} diff ${wt.base} ${wt.branch}`;
  if (full.length <= maxChars) return { text: full, truncated: false, seeRest };
  const cut = full.lastIndexOf("\n", maxChars);
  return { text: full.slice(0, cut > 0 ? cut : maxChars), truncated: true, seeRest };
}

/** A path as the user would paste it in a shell. */
const quote = (path: string) => (/^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`);

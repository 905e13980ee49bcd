import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FALLBACK_IDENTITY, git, gitCommitting, gitOut, GitFailure, NO_SUBMODULES } from "./git.ts";
import { supportsMergeTree } from "./git-version.ts";
import { oneAtATime } from "./repo-lock.ts";
import { untampered } from "./settle-worktree.ts";
import { untrackedInTheWay } from "./untracked-in-the-way.ts";
import { driverOverrides, worktreeGit } from "./worktree-git.ts";
import { WorktreeTampered, type Worktree } from "./worktree.ts";

export type MergeResult = { merged: true; summary: string } | { merged: false; conflicts: string[]; reason: string };

/**
 * Merges the worktree's branch into the main checkout's current branch (a merge commit, or none when
 * there is nothing new). Refuses with nothing changed when the merge would conflict, when the
 * checkout has uncommitted changes to files the branch changes, or when it is mid-merge, mid-rebase
 * or on a detached HEAD.
 */
export async function mergeWorktree(wt: Worktree, opts: MergeOptions = {}): Promise<MergeResult> {
  return oneAtATime(wt.repo, async () => {
    const plan = await mergePlan(wt, opts);
    return "merged" in plan ? plan : doMerge(wt, plan);
  });
}

/**
 * mergeWorktree's checks alone, changing nothing: the refusal it would give now, or undefined when
 * the merge can land (asked before the user is; mergeWorktree checks again, the checkout may change).
 */
export async function checkMerge(wt: Worktree, opts: MergeOptions = {}): Promise<Extract<MergeResult, { merged: false }> | undefined> {
  const plan = await oneAtATime(wt.repo, () => mergePlan(wt, opts));
  return "merged" in plan && !plan.merged ? plan : undefined;
}

type MergeOptions = { dryRunIn?: "merge-tree" | "worktree" };
/** A merge that can land: into which branch, how many commits, with which of the repository's drivers switched off. */
type MergeTarget = { target: string; count: number; drivers: string[] };

/** What to merge into (and how many commits), or the result without merging: a refusal, or nothing to merge. */
async function mergePlan(wt: Worktree, opts: MergeOptions): Promise<MergeResult | MergeTarget> {
  const target = await currentBranch(wt.repo);
  if (!target) return refused(`The main checkout ${wt.repo} is on a detached HEAD. Check out the branch to merge into, then merge again.`);
  const busy = await operationInProgress(wt.repo);
  if (busy) return refused(`The main checkout ${wt.repo} is in the middle of a ${busy}. Finish or abort it, then merge again.`);
  if (existsSync(wt.path)) {
    const wtGit = await untampered(wt).catch((error) => (error instanceof WorktreeTampered ? error : Promise.reject(error)));
    if (wtGit instanceof WorktreeTampered) return refused(`${wtGit.message} Discard the branch, or merge it by hand after reading it.`);
    if (await wtGit.out(["status", "--porcelain", NO_SUBMODULES])) {
      return refused(`The worktree ${wt.path} has uncommitted changes. Let the task settle (it commits them), then merge again.`);
    }
  }
  const branchRef = `refs/heads/${wt.branch}`;
  const count = Number(await gitOut(wt.repo, ["rev-list", "--count", `HEAD..${branchRef}`, "--"]));
  if (count === 0) return { merged: true, summary: `Nothing to merge: ${target} already has every commit of ${wt.branch}.` };

  const touched = await branchFiles(wt.repo, branchRef);
  const dirty = (await dirtyFiles(wt.repo)).filter((f) => touched.has(f));
  if (dirty.length) {
    return refused(`The main checkout has uncommitted changes to files ${wt.branch} changes. Commit or stash them, then merge again.`, dirty);
  }
  const kept = await untrackedInTheWay(wt.repo, touched);
  if (kept.length) {
    return refused(`Merging ${wt.branch} would overwrite untracked or ignored files of the main checkout (${kept.join(", ")}): git does not keep a copy. Nothing was changed. Move them aside, or discard the branch.`, kept);
  }
  const drivers = await driverOverrides(wt.repo);
  const conflicts = (opts.dryRunIn ?? (await supportsMergeTree()) ? "merge-tree" : "worktree") === "merge-tree"
    ? await conflictsByMergeTree(wt.repo, branchRef, drivers)
    : await conflictsByTrialMerge(wt.repo, branchRef, drivers);
  if (conflicts.length) {
    return refused(`Merging ${wt.branch} into ${target} would conflict. Nothing was changed. Resolve by hand (git merge ${wt.branch} in ${wt.repo}), or discard the branch.`, conflicts);
  }
  return { target, count, drivers };
}

const refused = (reason: string, conflicts: string[] = []): MergeResult => ({ merged: false, conflicts, reason });

async function doMerge(wt: Worktree, { target, count, drivers }: MergeTarget): Promise<MergeResult> {
  try {
    await gitCommitting(wt.repo, [...drivers, "merge", "--no-ff", "--no-edit", "--no-verify", "--no-gpg-sign", "--quiet", "-m", `Merge ${wt.branch}`, `refs/heads/${wt.branch}`]);
  } catch (error) {
    // Our checks passed, so no operation was in progress before: aborting only undoes ours.
    await git(wt.repo, ["merge", "--abort"], { okCodes: [128] }).catch(() => undefined);
    const why = error instanceof GitFailure ? error.stderr.trim().split("\n")[0] : String(error);
    return refused(`git merge of ${wt.branch} failed and was undone: ${why}`);
  }
  const stat = await gitOut(wt.repo, ["diff", "--shortstat", "HEAD^1", "HEAD"]);
  return { merged: true, summary: `Merged ${wt.branch} into ${target}: ${count} commit${count === 1 ? "" : "s"}${stat ? `, ${stat}` : ""}.` };
}

async function currentBranch(repo: string): Promise<string | undefined> {
  const head = await git(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"], { okCodes: [1] });
  return head.code === 0 ? head.stdout.trim() : undefined;
}

const IN_PROGRESS: [string, string][] = [
  ["MERGE_HEAD", "merge"], ["rebase-merge", "rebase"], ["rebase-apply", "rebase or am"],
  ["CHERRY_PICK_HEAD", "cherry-pick"], ["REVERT_HEAD", "revert"],
];

async function operationInProgress(repo: string): Promise<string | undefined> {
  const gitDir = await gitOut(repo, ["rev-parse", "--path-format=absolute", "--git-dir"]);
  return IN_PROGRESS.find(([file]) => existsSync(join(gitDir, file)))?.[1];
}

/** The paths the branch changes since it left HEAD's line (both sides of a rename). */
async function branchFiles(repo: string, branchRef: string): Promise<Set<string>> {
  const out = await gitOut(repo, ["diff", "--name-only", "--no-renames", "-z", `HEAD...${branchRef}`, "--"]);
  return new Set(out.split("\0").filter(Boolean));
}

/** Paths with uncommitted changes in the checkout: staged, unstaged and untracked (an untracked file would block the merge too). */
async function dirtyFiles(repo: string): Promise<string[]> {
  const out = (await git(repo, ["status", "--porcelain", "-z", "--no-renames", "--untracked-files=all"])).stdout;
  return out.split("\0").filter(Boolean).map((record) => record.slice(3));
}

/** git >= 2.38: a merge computed in the object store only (the working tree and index untouched). */
async function conflictsByMergeTree(repo: string, branchRef: string, drivers: string[]): Promise<string[]> {
  const run = await git(repo, [...drivers, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", "HEAD", branchRef], { okCodes: [1] });
  if (run.code === 0) return [];
  const [, ...files] = run.stdout.split("\0");
  return [...new Set(files.filter(Boolean))];
}

/** Older git: the merge tried in a throwaway detached worktree of HEAD, then removed. */
async function conflictsByTrialMerge(repo: string, branchRef: string, drivers: string[]): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "errands-trial-merge-"));
  const trial = join(dir, "wt");
  try {
    await git(repo, [...drivers, "worktree", "add", "--quiet", "--detach", trial, "HEAD"]);
    const trialGit = await worktreeGit({ path: trial, repo });
    const merge = await trialGit.run([...FALLBACK_IDENTITY, "merge", "--no-commit", "--no-ff", "--quiet", branchRef], { okCodes: [1] });
    if (merge.code === 0) return [];
    const out = await trialGit.out(["diff", "--name-only", "--diff-filter=U", "-z"]);
    return out.split("\0").filter(Boolean);
  } finally {
    await git(repo, ["worktree", "remove", "--force", trial]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await git(repo, ["worktree", "prune"]).catch(() => undefined);
  }
}

import { randomBytes } from "node:crypto";
import { appendFile, mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { git, gitOk, gitOut, GitFailure } from "./git.ts";
import { oneAtATime } from "./repo-lock.ts";
import { NO_HOOKS, refillSpare, spareMade, takeSpare, type Warm } from "./spare-worktree.ts";
import { REPOS_FILE, slugOf } from "./worktree-paths.ts";
import { baseConfigKey, WorktreeRefusal, type Worktree } from "./worktree.ts";

/**
 * A project whose index is smaller than this (about 3,000 files) checks out quickly enough without
 * a spare (this repository's 560 files: 90-550 ms on a busy machine; 10,000 files: 0.25-18 s).
 */
const SPARE_WORTH_INDEX_BYTES = 256 * 1024;

export { REPOS_FILE } from "./worktree-paths.ts";

/**
 * A new worktree of `repo` under `root`, on a new branch `bg/new-<8 hex>` (named properly by
 * nameBranch once the task has an id). Base: the checkout's HEAD commit, or the default branch's
 * latest commit. Uncommitted changes of the checkout are not carried over. The checkout runs no
 * hooks (a post-checkout hook would run at every launch). Its directory: `<root>/<8 hex>-<slug>`,
 * or a spare's `<root>/<8 hex>` (spare-worktree.ts).
 */
export async function createWorktree(input: {
  repo: string; root: string; description: string; from: "head" | "default-branch";
  /**
   * Take a spare checkout when one is ready, and start making the next (spare-worktree.ts), for a
   * project large enough to be worth it (an index of 256 KB, about 3,000 files), or always ("always").
   */
  spare?: boolean | "always";
  /** Has the host boot its instance for each new spare's directory (spare-worktree.ts). */
  warm?: Warm;
}): Promise<Worktree> {
  const repo = await mainCheckout(input.repo);
  const base = input.from === "head" ? await headCommit(repo) : await defaultBranchCommit(repo);
  const hex = randomBytes(4).toString("hex");
  const branch = `bg/new-${hex}`;
  await mkdir(input.root, { recursive: true });
  await rememberRepo(input.root, repo);
  if (input.spare) await spareMade(input.root);
  const spare = input.spare === "always" || (input.spare === true && (await indexBytes(repo)) >= SPARE_WORTH_INDEX_BYTES);
  const path = await oneAtATime(repo, async () => {
    let path = spare ? await takeSpare(repo, input.root, branch, base) : undefined;
    if (!path) {
      path = join(input.root, `${hex}-${slugOf(input.description)}`);
      await git(repo, [...NO_HOOKS, "worktree", "add", "--quiet", "-b", branch, path, base]);
    }
    await git(repo, ["config", baseConfigKey(branch), base]);
    return path;
  });
  if (spare) refillSpare(repo, input.root, input.warm);
  return { path, branch, base, repo };
}

/** Renames the worktree's branch to `bg/<short task id>-<slug of the description>` (with `-2`, `-3`… when taken). */
export async function nameBranch(wt: Worktree, shortTaskId: string, description: string): Promise<Worktree> {
  if (!/^[A-Za-z0-9_]+$/.test(shortTaskId)) throw new Error(`Short task id "${shortTaskId}" cannot be part of a branch name: expected letters, digits or "_".`);
  const wanted = `bg/${shortTaskId}-${slugOf(description)}`;
  if (wanted === wt.branch) return wt;
  return oneAtATime(wt.repo, async () => {
    let branch = wanted;
    for (let n = 2; await gitOk(wt.repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]); n++) branch = `${wanted}-${n}`;
    await git(wt.repo, ["branch", "-m", wt.branch, branch]); // moves branch.<name>.* config (the base) along
    return { ...wt, branch };
  });
}

/** The top level of the main checkout of the repository `dir` belongs to (a linked worktree's own main one). */
export async function mainCheckout(dir: string): Promise<string> {
  let listing: string;
  try {
    listing = await gitOut(dir, ["worktree", "list", "--porcelain"]);
  } catch (error) {
    if (error instanceof GitFailure && /not a git repository/i.test(error.stderr)) throw notARepo(dir);
    if (error instanceof GitFailure && error.code === "ENOENT") {
      throw new WorktreeRefusal(`git is not installed or ${dir} does not exist, so isolation "worktree" cannot be used. Install git, or leave out isolation.`);
    }
    throw error;
  }
  const main = listing.split("\n\n")[0]!.split("\n");
  if (main.includes("bare")) throw new WorktreeRefusal(`${dir} is a bare git repository, so isolation "worktree" cannot be used. Use a checkout, or leave out isolation.`);
  return main[0]!.slice("worktree ".length);
}

const notARepo = (dir: string) =>
  new WorktreeRefusal(`${dir} is not a git repository, so isolation "worktree" cannot be used. Run \`git init\` there and commit, or leave out isolation.`);

async function headCommit(repo: string): Promise<string> {
  try {
    return await gitOut(repo, ["rev-parse", "--verify", "HEAD^{commit}"]);
  } catch {
    throw new WorktreeRefusal(`${repo} has no commit yet, so isolation "worktree" has nothing to start from. Commit once, or leave out isolation.`);
  }
}

/**
 * The default branch's latest commit: the local branch origin/HEAD names (else its remote one),
 * else local `main`, `master` or init.defaultBranch, else HEAD.
 */
export async function defaultBranchCommit(repo: string): Promise<string> {
  const remoteHead = await git(repo, ["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], { okCodes: [1, 128] });
  const remote = remoteHead.code === 0 ? remoteHead.stdout.trim() : "";
  const configured = (await git(repo, ["config", "--get", "init.defaultBranch"], { okCodes: [1] })).stdout.trim();
  const candidates = [
    ...(remote ? [`refs/heads/${remote.replace(/^refs\/remotes\/origin\//, "")}`, remote] : []),
    "refs/heads/main", "refs/heads/master", ...(configured ? [`refs/heads/${configured}`] : []),
  ];
  for (const ref of candidates) {
    const found = await git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { okCodes: [1, 128] });
    if (found.code === 0) return found.stdout.trim();
  }
  return headCommit(repo);
}

/** The size of the main checkout's index file: what the number of files costs a checkout, without running git. */
async function indexBytes(repo: string): Promise<number> {
  return stat(join(repo, ".git", "index")).then((s) => s.size, () => 0);
}

async function rememberRepo(root: string, repo: string): Promise<void> {
  const file = join(root, REPOS_FILE);
  const known = await readFile(file, "utf8").catch(() => "");
  if (!known.split("\n").includes(repo)) await appendFile(file, `${repo}\n`);
}

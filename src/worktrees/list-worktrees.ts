import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { git, gitOut } from "./git.ts";
import { mainCheckout, REPOS_FILE } from "./create-worktree.ts";
import { unmergedCommitCount } from "./settle-worktree.ts";
import type { Worktree } from "./worktree.ts";

/**
 * A listed worktree. `unmergedCommits`: commits of its branch the main checkout's HEAD lacks. `exists`: its directory is there. `registered`: git still knows it as a
 * worktree (false for a branch whose worktree was removed but which was kept for its commits;
 * its path is then "").
 */
export type ListedWorktree = Worktree & { unmerged: boolean; unmergedCommits: number; exists: boolean; registered: boolean };

/**
 * The worktrees under `root`, found with git alone: the main checkouts named in the root's list
 * (and those its directories point to), their worktrees inside `root`, and their branches that
 * carry a recorded base but no worktree any more.
 */
export async function listWorktrees(root: string): Promise<ListedWorktree[]> {
  const repos = await reposOf(root);
  const listed = await Promise.all(repos.map((repo) => worktreesOf(repo, root)));
  return listed.flat();
}

async function reposOf(root: string): Promise<string[]> {
  const named = (await readFile(join(root, REPOS_FILE), "utf8").catch(() => "")).split("\n").filter(Boolean);
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const pointed = await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => pointedRepo(root, join(root, e.name))));
  return [...new Set([...named, ...pointed.filter((r): r is string => !!r)])].filter((repo) => existsSync(repo));
}

/**
 * The main checkout a directory's `.git` file names (`gitdir: <common dir>/worktrees/<name>`), read
 * as text: git is never run inside a child's directory, and a common dir under `root` is refused.
 */
async function pointedRepo(root: string, dir: string): Promise<string | undefined> {
  const m = /^gitdir: (.+)\n?$/.exec(await readFile(join(dir, ".git"), "utf8").catch(() => ""));
  const gitDir = m && resolve(dir, m[1]!);
  if (!gitDir || basename(dirname(gitDir)) !== "worktrees") return undefined;
  const common = dirname(dirname(gitDir));
  if (resolve(common).startsWith(resolve(root) + sep) || !existsSync(common)) return undefined;
  return mainCheckout(common).catch(() => undefined);
}

async function worktreesOf(repo: string, root: string): Promise<ListedWorktree[]> {
  const inside = (path: string) => resolve(path).startsWith(resolve(root) + sep);
  const registered = parseWorktreeList(await gitOut(repo, ["worktree", "list", "--porcelain"])).filter((w) => inside(w.path) && w.branch);
  const bases = await recordedBases(repo);
  const withTree = new Set(registered.map((w) => w.branch));
  const rows = [
    ...registered.map((w) => ({ path: w.path, branch: w.branch, registered: true })),
    ...[...bases.keys()].filter((b) => !withTree.has(b)).map((branch) => ({ path: "", branch, registered: false })),
  ];
  return Promise.all(rows.map(async (row) => {
    const wt: Worktree = { path: row.path, branch: row.branch, base: bases.get(row.branch) ?? "", repo };
    const unmergedCommits = await unmergedCommitCount(wt);
    return { ...wt, unmerged: unmergedCommits > 0, unmergedCommits, exists: row.path !== "" && existsSync(row.path), registered: row.registered };
  }));
}

/** `git worktree list --porcelain`: blocks of `worktree <path>`, `HEAD <sha>`, `branch refs/heads/<b>` or `detached`, `prunable …`. */
export function parseWorktreeList(out: string): { path: string; branch: string }[] {
  return out.split("\n\n").filter(Boolean).map((block) => {
    const lines = block.split("\n");
    const path = lines.find((l) => l.startsWith("worktree "))?.slice("worktree ".length) ?? "";
    const branch = lines.find((l) => l.startsWith("branch refs/heads/"))?.slice("branch refs/heads/".length) ?? "";
    return { path, branch };
  });
}

/** branch -> base, for every existing branch with a recorded base (git config). */
async function recordedBases(repo: string): Promise<Map<string, string>> {
  const out = (await git(repo, ["config", "--get-regexp", "^branch\\..*\\.errandsbase$"], { okCodes: [1] })).stdout;
  const bases = new Map<string, string>();
  for (const line of out.split("\n").filter(Boolean)) {
    const [key, sha] = line.split(" ");
    const branch = key!.slice("branch.".length, -".errandsbase".length);
    if (sha && (await git(repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], { okCodes: [1] })).code === 0) bases.set(branch, sha);
  }
  return bases;
}

import { lstat, readdir, readFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { realpathSync } from "node:fs";
import { git, gitCommitting, PINNED_ARGS, type GitRun } from "./git.ts";
import { WorktreeTampered } from "./worktree.ts";

/**
 * The one way the plugin runs git about a task's worktree. The child owns every file there, the
 * `.git` file included, so nothing is discovered from inside it: the git dir is the one
 * `git worktree add` made under the main repository (`<common dir>/worktrees/<name>`, found from
 * the main repository), passed with `--git-dir` and `--work-tree`. The always-on overrides
 * (fsmonitor, hooks, signing: git.ts) apply, and so does `driverOverrides`.
 */
export type WorktreeGit = {
  /** The worktree's git dir, under the main repository's. */
  gitDir: string;
  run(args: string[], opts?: { okCodes?: number[] }): Promise<GitRun>;
  out(args: string[]): Promise<string>;
  committing(args: string[]): Promise<GitRun>;
};

type Place = { path: string; repo: string };

/** Git pinned to the worktree at `wt.path`; throws WorktreeTampered when git's own record of it is not found. */
export async function worktreeGit(wt: Place): Promise<WorktreeGit> {
  const { gitDir, prefix } = await pinnedArgs(wt);
  const args = (rest: string[]) => [...prefix, ...rest];
  return {
    gitDir,
    run: (rest, opts) => git(wt.path, args(rest), opts),
    out: async (rest) => (await git(wt.path, args(rest))).stdout.trim(),
    committing: (rest) => gitCommitting(wt.path, args(rest)),
  };
}

/**
 * The arguments that go before a git subcommand about the worktree (for a caller with its own
 * process handling, such as a run's workspace block, which kills git at a deadline): the pinned
 * config, `--git-dir`, `--work-tree`, the driver overrides.
 */
export async function pinnedArgs(wt: Place): Promise<{ gitDir: string; prefix: string[] }> {
  const gitDir = await adminDirOf(wt);
  const pinned = [...PINNED_ARGS, "--git-dir", gitDir, "--work-tree", wt.path];
  return { gitDir, prefix: [...pinned, ...(await driverOverrides(wt.path, pinned))] };
}

/**
 * Throws WorktreeTampered unless the worktree's `.git` is still the file git wrote: a regular file
 * (not a link, not a directory) whose whole content is `gitdir: <its git dir>`.
 */
export async function assertUntampered(wt: Place, gitDir: string): Promise<void> {
  const dotGit = join(wt.path, ".git");
  const info = await lstat(dotGit).catch(() => undefined);
  if (!info?.isFile()) throw tampered(wt, `${dotGit} is ${info ? (info.isSymbolicLink() ? "a symbolic link" : "not a file") : "missing"}`);
  const text = await readFile(dotGit, "utf8");
  const m = /^gitdir: (.+)\n?$/.exec(text);
  const points = m && resolve(wt.path, m[1]!);
  if (!points || real(points) !== real(gitDir)) throw tampered(wt, `${dotGit} no longer points at ${gitDir}`);
}

const tampered = (wt: Place, what: string) => new WorktreeTampered(
  `worktree_tampered: ${what} (the child rewrote its worktree's git link). Nothing was committed; the checkout ${wt.repo} was not touched. The branch keeps what was committed before.`,
);

/**
 * The worktree's git dir: the one entry of `<common dir>/worktrees/` whose `gitdir` file (written
 * by git in the main repository, out of the child's files) names `<path>/.git`. None: the
 * worktree is not registered (removed by hand); several: one was repointed by the child
 * (`git worktree repair`), so none is trusted.
 */
async function adminDirOf(wt: Place): Promise<string> {
  const common = (await git(wt.repo, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).stdout.trim();
  const admin = join(common, "worktrees");
  const want = join(real(wt.path), ".git");
  const names = await readdir(admin).catch(() => [] as string[]);
  const found: string[] = [];
  for (const name of names) {
    const recorded = (await readFile(join(admin, name, "gitdir"), "utf8").catch(() => "")).trim();
    const dotGit = recorded && (isAbsolute(recorded) ? recorded : resolve(admin, name, recorded));
    if (dotGit && join(real(dirname(dotGit)), basename(dotGit)) === want) found.push(join(admin, name));
  }
  if (found.length === 1) return found[0]!;
  throw tampered(wt, found.length ? `${found.length} worktrees of ${wt.repo} claim ${wt.path}` : `${wt.path} is not a worktree git knows of in ${wt.repo}`);
}

/** Driver commands (filters, textconv, merge drivers): what a child's `.gitattributes` can name. */
const DRIVERS = "^(filter\\..+\\.(clean|smudge|process|required)|diff\\..+\\.(textconv|command)|merge\\..+\\.driver)$";

/**
 * `-c` overrides that switch off every filter, diff and merge driver set in the repository's own
 * config (or the worktree's config.worktree): a child can write that config (`git config` in its
 * worktree, which writes the shared config) and name the driver in its `.gitattributes`. The
 * user's global and system config are the user's own and stay in force (git-lfs, say).
 * `-c extensions.worktreeConfig=false` does not stop git reading config.worktree (2.39), so the
 * worktree scope is read here too. A merge driver becomes `false` (a conflict, nothing merged).
 */
export async function driverOverrides(cwd: string, pinned: string[] = []): Promise<string[]> {
  const run = await git(cwd, [...pinned, "config", "--show-scope", "--name-only", "-z", "--get-regexp", DRIVERS], { okCodes: [1] });
  const fields = run.stdout.split("\0");
  const overrides: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [scope, key] = [fields[i]!, fields[i + 1]!];
    if (scope !== "local" && scope !== "worktree") continue;
    const value = key.endsWith(".required") ? "false" : key.startsWith("merge.") ? "false" : "";
    overrides.push("-c", `${key}=${value}`);
  }
  return overrides;
}

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

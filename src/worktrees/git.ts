import { execFile } from "node:child_process";

/** A git command that exited non-zero: its exit code and what it said on stderr. */
export class GitFailure extends Error {
  constructor(readonly args: string[], readonly cwd: string, readonly code: number | string | undefined, readonly stderr: string, readonly stdout: string) {
    super(`git ${args.join(" ")} failed in ${cwd}: ${stderr.trim().split("\n").slice(0, 3).join(" ") || `exit ${code}`}`);
    this.name = "GitFailure";
  }
}

export type GitRun = { stdout: string; code: number };

/**
 * Another git command holds a lock this one needs (two launches at once both write .git/config),
 * or is halfway through adding a worktree this one reads: worth a retry.
 */
const LOCKED = /could not lock config file|Unable to create '[^']*\.lock': File exists|failed to read \S*worktrees\//i;
const LOCK_RETRIES = [20, 50, 100, 200, 400];

/**
 * Runs git with `args` in `cwd` through execFile (never a shell) and resolves with its stdout.
 * A non-zero exit rejects with a GitFailure, unless `okCodes` lists it (then it resolves with the
 * code). A command refused for a lock another git command holds is tried again, up to 5 times.
 */
export async function git(cwd: string, args: string[], opts: { okCodes?: number[]; env?: NodeJS.ProcessEnv } = {}): Promise<GitRun> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await gitOnce(cwd, args, opts);
    } catch (error) {
      const wait = LOCK_RETRIES[attempt];
      if (wait === undefined || !(error instanceof GitFailure) || !LOCKED.test(error.stderr)) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function gitOnce(cwd: string, args: string[], opts: { okCodes?: number[]; env?: NodeJS.ProcessEnv }): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    execFile("git", args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...gitEnv(), ...opts.env } }, (error, stdout, stderr) => {
      if (!error) return resolve({ stdout, code: 0 });
      const code = (error as NodeJS.ErrnoException & { code?: number | string }).code;
      if (typeof code === "number" && opts.okCodes?.includes(code)) return resolve({ stdout, code });
      reject(new GitFailure(args, cwd, code, stderr || error.message, stdout));
    });
  });
}

/** The trimmed stdout of a git command that must succeed. */
export async function gitOut(cwd: string, args: string[]): Promise<string> {
  return (await git(cwd, args)).stdout.trim();
}

/** Whether a git command exits 0 (a check such as `rev-parse --verify`). */
export async function gitOk(cwd: string, args: string[]): Promise<boolean> {
  return git(cwd, args).then(() => true, () => false);
}

/**
 * Where hooks are looked for: a path that is not a folder and cannot become one, so no hook of the
 * repository (core.hooksPath, husky) runs. Not a folder of the plugin's: the child runs as the same
 * user and could put a hook in any folder.
 */
export const NO_HOOKS_PATH = "/dev/null";

/**
 * Config every git command of the plugin runs with, above every config file (the repository's can
 * be written by a child through `git config` in its worktree): no fsmonitor command, no hooks, no
 * signing program, no ssh command (an external diff has no off value: diffs pass `--no-ext-diff
 * --no-textconv`, see DIFF_SAFE). Passed in the environment (GIT_CONFIG_COUNT, git >= 2.31; older
 * git ignores it, and the worktree commands pass the same as `-c`), so git's own subprocesses
 * (a submodule's status) get it too.
 */
export const PINNED_CONFIG: [string, string][] = [
  ["core.fsmonitor", "false"], ["core.hooksPath", NO_HOOKS_PATH], ["core.untrackedCache", "false"],
  ["commit.gpgSign", "false"], ["tag.gpgSign", "false"], ["core.sshCommand", "false"],
];

/** For every command that shows a diff's text: no program the repository's config or attributes name. */
export const DIFF_SAFE = ["--no-ext-diff", "--no-textconv"];

/**
 * For every status or diff that looks at a worktree's files: a folder the child made a repository
 * of (`sub/.git/`, added as a gitlink) is not looked into, for git would run `git status` inside it
 * with that repository's own config (its fsmonitor, its filters).
 */
export const NO_SUBMODULES = "--ignore-submodules=all";

/** PINNED_CONFIG as `-c key=value` arguments. */
export const PINNED_ARGS = PINNED_CONFIG.flatMap(([key, value]) => ["-c", `${key}=${value}`]);

/**
 * No prompts, English messages, no inherited GIT_DIR / GIT_WORK_TREE / GIT_INDEX_FILE (e.g. when
 * OpenCode runs inside a hook) pointing git elsewhere, the pinned config on top of the user's.
 */
function gitEnv(): NodeJS.ProcessEnv {
  const { GIT_DIR: _dir, GIT_WORK_TREE: _tree, GIT_INDEX_FILE: _index, GIT_COMMON_DIR: _common, ...env } = process.env;
  const count = Number(env.GIT_CONFIG_COUNT) || 0;
  const pinned: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(count + PINNED_CONFIG.length) };
  PINNED_CONFIG.forEach(([key, value], i) => Object.assign(pinned, { [`GIT_CONFIG_KEY_${count + i}`]: key, [`GIT_CONFIG_VALUE_${count + i}`]: value }));
  return { ...env, ...pinned, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" };
}

/** Commit identity for when the repository has none configured: a commit of the plugin must not fail for it. */
export const FALLBACK_IDENTITY = ["-c", "user.name=opencode-errands", "-c", "user.email=opencode-errands@localhost"];

/** Runs a committing git command; when git refuses for want of an identity, runs it again with the fallback one. */
export async function gitCommitting(cwd: string, args: string[]): Promise<GitRun> {
  try {
    return await git(cwd, args);
  } catch (error) {
    if (!(error instanceof GitFailure) || !/tell me who you are|empty ident|unable to auto-detect email/i.test(error.stderr)) throw error;
    return git(cwd, [...FALLBACK_IDENTITY, ...args]);
  }
}

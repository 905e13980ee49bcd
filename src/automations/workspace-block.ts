import { execFile, type ChildProcess } from "node:child_process";
import { stat } from "node:fs/promises";
import type { TaskWorktree } from "../core/task.ts";
import { loadWorktrees } from "../worktrees/load-worktrees.ts";

/** The whole budget for both git calls, in ms: a run never waits longer than this for its block. */
export const WORKSPACE_TIMEOUT_MS = 100;
const MAX_FILES = 10;
const MAX_SUBJECT = 100;

type GitResult = { ok: true; stdout: string } | { ok: false; why: string };

/**
 * A short picture of the project's git state for a run's prompt: branch, ahead/behind its
 * upstream, uncommitted files (count and the first 10), the last 3 commits. Two git processes
 * in parallel, killed at the deadline. Never throws: git slow, missing or not a repository
 * gives one line saying so. `where`: the project's directory, or an isolated run's worktree.
 */
export async function workspaceBlock(where: string | TaskWorktree, opts: { timeoutMs?: number; now?: number } = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? WORKSPACE_TIMEOUT_MS;
  const directory = typeof where === "string" ? where : where.workdir ?? where.path;
  try {
    const pinned = typeof where === "string" ? [] : [...(await pinnedTo(where)), "-c", "diff.ignoreSubmodules=all"];
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    const [status, log] = await Promise.all([
      git(directory, [...pinned, "--no-optional-locks", "status", "--porcelain=v2", "--branch", "-z"], deadline.signal),
      git(directory, [...pinned, "--no-optional-locks", "log", "-3", "--format=%h%x09%s%x09%ct"], deadline.signal),
    ]).finally(() => clearTimeout(timer));
    if (deadline.signal.aborted) return `[Workspace: skipped, git did not answer within ${timeoutMs} ms]`;
    if (!status.ok) return `[Workspace: skipped, ${await whyNot(directory, status.why)}]`;
    const state = parseStatus(status.stdout);
    const commits = log.ok ? commitLines(log.stdout, opts.now ?? Date.now()) : [];
    return ["[Workspace]", branchLine(state), filesLine(state.files), ...recentCommits(state, commits)].join("\n");
  } catch (error) {
    return `[Workspace: skipped, ${error instanceof Error ? error.message : String(error)}]`;
  }
}

/**
 * In a run's worktree (where its steps have run), git is the worktrees module's: the worktree's
 * git dir and work tree named, never found from its `.git`, with its pinned config.
 */
async function pinnedTo(worktree: TaskWorktree): Promise<string[]> {
  return (await (await loadWorktrees()).pinnedArgs(worktree)).prefix;
}

/** Resolves with git's output or why it failed; killed (and resolved) when the signal aborts. */
function git(directory: string, args: string[], signal: AbortSignal): Promise<GitResult> {
  return new Promise((resolve) => {
    let child: ChildProcess | undefined;
    const onAbort = () => {
      child?.kill("SIGKILL");
      resolve({ ok: false, why: "timeout" });
    };
    child = execFile("git", args, { cwd: directory, encoding: "utf8", maxBuffer: 4 * 1024 * 1024, env: gitEnv() }, (error, stdout, stderr) => {
      signal.removeEventListener("abort", onAbort);
      if (!error) return resolve({ ok: true, stdout });
      const code = (error as NodeJS.ErrnoException).code;
      resolve({ ok: false, why: code === "ENOENT" ? "ENOENT" : firstLine(stderr) || error.message });
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * No prompts, no optional index writes (the user's own git must never meet our lock), English
 * messages; no inherited GIT_DIR (e.g. inside a hook) pointing elsewhere. The user's git config applies.
 */
function gitEnv(): NodeJS.ProcessEnv {
  const { GIT_DIR: _dir, GIT_WORK_TREE: _tree, GIT_INDEX_FILE: _index, ...env } = process.env;
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" };
}

/** spawn says ENOENT both for a missing git and for a missing directory. */
async function whyNot(directory: string, why: string): Promise<string> {
  if (why !== "ENOENT") return /not a git repository/i.test(why) ? "not a git repository" : `git failed: ${why}`;
  const exists = await stat(directory).then((s) => s.isDirectory(), () => false);
  return exists ? "git is not installed (not found on PATH)" : `the project directory ${directory} does not exist`;
}

type Status = { oid?: string; head?: string; upstream?: string; ahead?: number; behind?: number; files: string[] };

/** `git status --porcelain=v2 --branch -z`: header lines, then one record per changed path. */
export function parseStatus(stdout: string): Status {
  const state: Status = { files: [] };
  const records = stdout.split("\0");
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (r.startsWith("# branch.oid ")) state.oid = r.slice(13);
    else if (r.startsWith("# branch.head ")) state.head = r.slice(14);
    else if (r.startsWith("# branch.upstream ")) state.upstream = r.slice(18);
    else if (r.startsWith("# branch.ab ")) {
      const m = /^\+(\d+) -(\d+)$/.exec(r.slice(12));
      if (m) [state.ahead, state.behind] = [Number(m[1]), Number(m[2])];
    } else if (r.startsWith("1 ")) state.files.push(field(r, 8));
    else if (r.startsWith("2 ")) {
      state.files.push(field(r, 9));
      i++; // the rename's original path is the next record
    } else if (r.startsWith("u ")) state.files.push(field(r, 10));
    else if (r.startsWith("? ")) state.files.push(r.slice(2));
  }
  return state;
}

/** The rest of the record after `skip` space-separated fields (a path may contain spaces). */
function field(record: string, skip: number): string {
  let at = 0;
  for (let n = 0; n < skip; n++) at = record.indexOf(" ", at) + 1;
  return record.slice(at);
}

function branchLine(s: Status): string {
  const name = s.head === "(detached)" ? `detached HEAD at ${s.oid?.slice(0, 7) ?? "?"}` : `branch ${s.head ?? "?"}`;
  if (!s.upstream) return `${name} (no upstream)`;
  if (s.ahead === undefined) return `${name} (upstream ${s.upstream} is gone)`;
  return `${name} (${s.ahead} ahead, ${s.behind} behind ${s.upstream})`;
}

function filesLine(files: string[]): string {
  if (files.length === 0) return "no uncommitted files";
  const noun = files.length === 1 ? "file" : "files";
  const capped = files.length > MAX_FILES ? ` (first ${MAX_FILES})` : "";
  return `${files.length} uncommitted ${noun}${capped}: ${files.slice(0, MAX_FILES).join(", ")}`;
}

function recentCommits(s: Status, lines: string[]): string[] {
  if (s.oid === "(initial)") return ["no commits yet"];
  return lines.length ? ["recent commits:", ...lines] : [];
}

/** `%h\t%s\t%ct` lines → "- abc1234 Fix x (2 h ago)". */
function commitLines(stdout: string, now: number): string[] {
  return stdout.split("\n").filter(Boolean).map((line) => {
    const parts = line.split("\t");
    const [hash, seconds, subject] = [parts[0], parts.at(-1), parts.slice(1, -1).join(" ")];
    const short = subject.length > MAX_SUBJECT ? `${subject.slice(0, MAX_SUBJECT - 1)}…` : subject;
    return `- ${hash} ${short} (${age(now - Number(seconds) * 1000)})`;
  });
}

export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

import { spawn } from "node:child_process";

/** What the project's .gitignore files (and git's other exclude files) ignore, asked of git itself. */
export type GitIgnore = {
  /** Paths (relative to the project directory) that git ignored when the source started: folders whose own name matches a pattern, and files. */
  ignoredAtStart: ReadonlySet<string>;
  /** The given relative paths that git ignores now. */
  ignoredAmong(paths: string[]): Promise<Set<string>>;
};

type GitResult = { code: number; stdout: string; stderr: string };

const GIT_TIMEOUT_MS = 20_000;

/** undefined when the directory is not in a git work tree (or git is missing): then only the fixed ignores apply. */
export async function openGitIgnore(directory: string): Promise<GitIgnore | undefined> {
  const prefix = await git(directory, ["rev-parse", "--show-prefix"]);
  if (prefix.code !== 0) return undefined;
  // `--ignored=matching` lists a folder only when its own name matches (ls-files would also list
  // folders that merely hold ignored files). Porcelain paths start at the repository root.
  const status = await git(directory, [
    "status", "--porcelain=v1", "-z", "--ignored=matching", "--untracked-files=normal", "--", ".",
  ]);
  if (status.code !== 0) throw new Error(`git status failed: ${status.stderr.trim()}`);
  const repoPrefix = prefix.stdout.trim();
  const ignoredAtStart = new Set(
    status.stdout
      .split("\0")
      .filter((entry) => entry.startsWith("!! "))
      .map((entry) => entry.slice(3).replace(/\/$/, ""))
      .filter((path) => path.startsWith(repoPrefix))
      .map((path) => path.slice(repoPrefix.length)),
  );
  const checkIgnore = async (paths: string[]) => {
    // Exit 1: none ignored. Tracked files are never reported, as in git itself.
    const result = await git(directory, ["check-ignore", "--stdin", "-z"], paths.join("\0"));
    if (result.code > 1) throw new Error(`git check-ignore failed: ${result.stderr.trim()}`);
    return new Set(result.stdout.split("\0").filter(Boolean));
  };
  return { ignoredAtStart, ignoredAmong: batched(checkIgnore) };
}

type Waiting = { paths: string[]; resolve(ignored: Set<string>): void; reject(error: unknown): void };

/**
 * Questions asked in the same turn of the event loop share one git process: a save that ends the
 * bursts of a hundred triggers on the project at once costs one `git check-ignore`, not a hundred.
 */
function batched(check: (paths: string[]) => Promise<Set<string>>): (paths: string[]) => Promise<Set<string>> {
  let waiting: Waiting[] = [];
  const flush = async () => {
    const batch = waiting;
    waiting = [];
    try {
      const ignored = await check([...new Set(batch.flatMap((w) => w.paths))]);
      for (const w of batch) w.resolve(new Set(w.paths.filter((path) => ignored.has(path))));
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  };
  return (paths) => {
    if (paths.length === 0) return Promise.resolve(new Set());
    return new Promise((resolve, reject) => {
      waiting.push({ paths, resolve, reject });
      if (waiting.length === 1) setImmediate(() => void flush());
    });
  };
}

function git(cwd: string, args: string[], input?: string): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = spawn("git", args, {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
      timeout: GIT_TIMEOUT_MS,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.stdin.on("error", () => {}); // git may exit before reading everything; its exit code says what happened
    child.on("error", (error) => resolve({ code: 127, stdout: "", stderr: error.message }));
    child.on("close", (code) =>
      resolve({ code: code ?? 128, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }),
    );
    child.stdin.end(input ?? "");
  });
}

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * git for tests: no user or system config, a fixed identity through the environment. Call
 * isolateGit() once per test file so the code under test (which inherits process.env) sees the same.
 */
export function isolateGit(): void {
  Object.assign(process.env, {
    GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.invalid", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.invalid",
  });
}

export function gitSync(cwd: string, args: string[]): string {
  return execFileSync("git", ["-c", "init.defaultBranch=main", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Temp directories made by a test file, removed by cleanup(). */
export function tempDirs(prefix: string) {
  const made: string[] = [];
  return {
    make(): string {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup: () => made.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })),
  };
}

/** Writes `files` (path -> content) under `dir` and commits them; returns the new HEAD. */
export function commitFiles(dir: string, files: Record<string, string>, message = "commit"): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  gitSync(dir, ["add", "--all"]);
  gitSync(dir, ["commit", "--quiet", "-m", message]);
  return gitSync(dir, ["rev-parse", "HEAD"]);
}

/** A new repository on branch main with one commit of `files`. */
export function initRepo(dir: string, files: Record<string, string> = { "README.md": "hello\n" }): string {
  gitSync(dir, ["init", "--quiet"]);
  commitFiles(dir, files, "first");
  return dir;
}

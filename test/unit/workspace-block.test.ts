import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workspaceBlock, age } from "../../src/automations/workspace-block.ts";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { parseOptions } from "../../src/options/options.ts";
import { waitFor as waitForEffect } from "../helpers/wait-for.ts";

/** Generous: these tests are about what the block says, one test is about the deadline. */
const SLOW_OK = { timeoutMs: 10_000 };
const NOW = Date.parse("2026-11-20T12:00:00Z");
const roots: string[] = [];
after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ws-block-"));
  roots.push(dir);
  return dir;
}

/** git in `cwd` with no user or system config; commits dated `at` (ms). */
function git(cwd: string, args: string[], at = NOW): string {
  const date = `@${Math.floor(at / 1000)} +0000`;
  const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main", ...args], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

function commit(cwd: string, file: string, subject: string, at = NOW): string {
  writeFileSync(join(cwd, file), `${subject}\n`);
  git(cwd, ["add", file], at);
  git(cwd, ["commit", "-q", "-m", subject], at);
  return git(cwd, ["rev-parse", "--short", "HEAD"]);
}

/** A bare origin, a clone with one pushed commit; returns the clone. */
function cloneWithOrigin(): { origin: string; work: string } {
  const root = tempDir();
  const origin = join(root, "origin.git");
  git(root, ["init", "-q", "--bare", origin]);
  const work = join(root, "work");
  git(root, ["clone", "-q", origin, work]);
  commit(work, "a.txt", "first");
  git(work, ["push", "-q", "-u", "origin", "main"]);
  return { origin, work };
}

describe("workspaceBlock", () => {
  it("names the branch, ahead and behind its upstream, the uncommitted files and the last 3 commits with their age", async () => {
    const { origin, work } = cloneWithOrigin();
    // Someone else pushes one commit: after a fetch the clone is 1 behind.
    const other = join(origin, "..", "other");
    git(join(origin, ".."), ["clone", "-q", origin, other]);
    commit(other, "o.txt", "theirs");
    git(other, ["push", "-q", "origin", "main"]);
    git(work, ["fetch", "-q"]);
    const h1 = commit(work, "b.txt", "Second: two hours ago", NOW - 2 * 3600_000);
    const h2 = commit(work, "c.txt", "Third\twith a tab", NOW - 5 * 60_000);
    const h3 = commit(work, "d.txt", "Fourth, just now", NOW - 20_000);
    writeFileSync(join(work, "a.txt"), "changed\n");
    writeFileSync(join(work, "new file.txt"), "x\n");

    const block = await workspaceBlock(work, { ...SLOW_OK, now: NOW });
    assert.equal(block, [
      "[Workspace]",
      "branch main (3 ahead, 1 behind origin/main)",
      "2 uncommitted files: a.txt, new file.txt",
      "recent commits:",
      `- ${h3} Fourth, just now (20 s ago)`,
      `- ${h2} Third with a tab (5 min ago)`,
      `- ${h1} Second: two hours ago (2 h ago)`,
    ].join("\n"));
  });

  it("counts every uncommitted file and lists the first 10", async () => {
    const { work } = cloneWithOrigin();
    for (let i = 0; i < 12; i++) writeFileSync(join(work, `f${String(i).padStart(2, "0")}.txt`), "x\n");
    git(work, ["add", "f00.txt", "f01.txt"]);
    git(work, ["mv", "a.txt", "renamed.txt"]);
    const lines = (await workspaceBlock(work, SLOW_OK)).split("\n");
    assert.equal(lines[1], "branch main (0 ahead, 0 behind origin/main)");
    const names = ["renamed.txt", ...Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`)].sort();
    const files = lines[2]!;
    assert.match(files, /^13 uncommitted files \(first 10\): /);
    const listed = files.replace(/^[^:]+: /, "").split(", ");
    assert.equal(listed.length, 10);
    for (const name of listed) assert.ok(names.includes(name), `${name} is one of the changed files`);
  });

  it("says so for no upstream, a detached HEAD, a gone upstream and a repository without commits", async () => {
    const plain = tempDir();
    git(plain, ["init", "-q"]);
    assert.equal(await workspaceBlock(plain, SLOW_OK), "[Workspace]\nbranch main (no upstream)\nno uncommitted files\nno commits yet");
    const hash = commit(plain, "a.txt", "only");
    assert.match(await workspaceBlock(plain, SLOW_OK), /^\[Workspace\]\nbranch main \(no upstream\)\nno uncommitted files\nrecent commits:\n- \w+ only \(/);
    git(plain, ["checkout", "-q", "--detach"]);
    assert.match(await workspaceBlock(plain, SLOW_OK), new RegExp(`^\\[Workspace\\]\\ndetached HEAD at ${hash.slice(0, 7)} \\(no upstream\\)\\n`));

    const { work } = cloneWithOrigin();
    git(work, ["update-ref", "-d", "refs/remotes/origin/main"]);
    assert.match(await workspaceBlock(work, SLOW_OK), /\nbranch main \(upstream origin\/main is gone\)\n/);
  });

  it("gives one line, never a throw, outside a repository, for a missing directory and without git", async () => {
    const bare = tempDir();
    assert.equal(await workspaceBlock(bare, SLOW_OK), "[Workspace: skipped, not a git repository]");
    const missing = join(bare, "nope");
    assert.equal(await workspaceBlock(missing, SLOW_OK), `[Workspace: skipped, the project directory ${missing} does not exist]`);
    const path = process.env.PATH;
    const emptyBin = join(bare, "bin");
    mkdirSync(emptyBin);
    process.env.PATH = emptyBin;
    try {
      assert.equal(await workspaceBlock(bare, SLOW_OK), "[Workspace: skipped, git is not installed (not found on PATH)]");
    } finally {
      process.env.PATH = path;
    }
  });

  it("skips with a note when git does not answer within the budget", async () => {
    const { work } = cloneWithOrigin();
    const started = Date.now();
    assert.equal(await workspaceBlock(work, { timeoutMs: 1 }), "[Workspace: skipped, git did not answer within 1 ms]");
    assert.ok(Date.now() - started < 1000, "returns at the deadline, not when git is done");
  });

  it("writes ages in the largest whole unit", () => {
    assert.deepEqual([0, 59_000, 60_000, 3_599_000, 3_600_000, 86_399_000, 86_400_000 * 3].map(age), ["0 s ago", "59 s ago", "1 min ago", "59 min ago", "1 h ago", "23 h ago", "3 d ago"]);
  });
});

describe("the workspace block in a run's prompt", () => {
  const waitFor = <T>(probe: () => T | undefined | false, what: string) => waitForEffect(probe, what, 10_000);

  function setup(workspaceContext: boolean) {
    const { work } = cloneWithOrigin();
    commit(work, "b.txt", "Ahead by one");
    const db = tempDb();
    const f = automationFixture(db.path, { workspaceContext }, { directory: work });
    after(() => { f.close(); db.cleanup(); });
    f.host.setActivity(PARENT, "idle");
    return f;
  }

  it("sits between the run's context line and its prompt, in a fresh run and in a continued one", async () => {
    const f = setup(true);
    const a = f.create({ sessionMode: "continue", notify: "never", prompt: "Look at CI." });
    await f.runs.runNow(a.id);
    const child = await waitFor(() => f.children()[0], "the run's child");
    const first = await waitFor(() => f.host.promptsTo(child)[0]?.text, "the first prompt");
    assert.match(first, /^\[Automation "check ci" \(au\w+\), run #1, fired by run now \(task_run\)\]\n\n\[Workspace\]\nbranch main \(1 ahead, 0 behind origin\/main\)\nno uncommitted files\nrecent commits:\n- \w+ Ahead by one \([^)]+\)\n- \w+ first \([^)]+\)\n\nLook at CI\.$/);
    f.host.finishRun(child, "done");
    await waitFor(() => f.autoStore.runs(a.id)[0]?.status === "completed", "run #1 completed");
    await f.runs.runNow(a.id);
    const second = await waitFor(() => f.host.promptsTo(child)[1]?.text, "the continued run's prompt");
    assert.match(second, /^\[Automation "check ci" \(au\w+\), run #2, [^\n]+\]\n\n\[Workspace\]\nbranch main \(1 ahead, 0 behind origin\/main\)\n[\s\S]+\n\nLook at CI\.$/);
  });

  it("is left out when workspaceContext is false", async () => {
    const f = setup(false);
    const a = f.create({ notify: "never", prompt: "Look at CI." });
    await f.runs.runNow(a.id);
    const child = await waitFor(() => f.children()[0], "the run's child");
    const first = await waitFor(() => f.host.promptsTo(child)[0]?.text, "the first prompt");
    assert.match(first, /^\[Automation "check ci" \(au\w+\), run #1, fired by run now \(task_run\)\]\n\nLook at CI\.$/);
  });
});

describe("option workspaceContext", () => {
  it("is on by default, takes a boolean, and names the fix for anything else", () => {
    assert.equal(parseOptions({}).workspaceContext, true);
    assert.equal(parseOptions({ workspaceContext: false }).workspaceContext, false);
    assert.throws(() => parseOptions({ workspaceContext: "no" }), /"workspaceContext" must be one of true, false, got "no"/);
  });
});

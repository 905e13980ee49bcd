import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startStack, call, launchTask, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";

/**
 * The spare checkout of a project large enough to keep one (3,500 files): made after the first
 * isolated launch where its task will work, with OpenCode's instance for that directory booted
 * before it is marked ready. That instance's plugin is passive, and the next isolated child works
 * in the spare's directory.
 */
describe("a warm spare checkout on the real host", () => {
  const dir = mkdtempSync(join(tmpdir(), "wt-spare-"));
  let stack: Stack | undefined;
  after(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

  function largeProject(): string {
    const project = join(dir, "project");
    for (let i = 0; i < 3500; i++) {
      const folder = join(project, "src", `d${i % 50}`);
      if (i < 50) mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `file-${i}.ts`), `export const v${i} = ${i};\n`);
    }
    git(project, "init", "--quiet");
    git(project, "add", "--all");
    git(project, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "--quiet", "-m", "files");
    return project;
  }

  type Row = { status: string; worktree: string | null };
  const row = (s: Stack, id: string) => queryDb<Row>(pluginDbPath(s.server), "SELECT status, worktree FROM tasks WHERE id = ?", id)[0];
  const settled = (s: Stack, id: string) => waitUntil(() => (row(s, id)?.status === "completed" ? row(s, id) : undefined), { timeoutMs: 60_000, what: `task ${id} completed` });
  const rootOf = (s: Stack) => {
    const worktrees = join(dirname(pluginDbPath(s.server)), "worktrees");
    return join(worktrees, readdirSync(worktrees)[0]!);
  };
  /** The ready spare's directory, once there is one. */
  const readySpare = (root: string) => {
    const marker = readdirSync(root).find((n) => n.startsWith(".spare-") && !n.startsWith(".spare-making-"));
    return marker && join(root, marker.slice(".spare-".length));
  };

  it("is warmed while its plugin instance stays passive, and the next isolated child works in its directory", async () => {
    const s = (stack = await startStack({
      reuse: { projectDir: largeProject() },
      pluginOptions: { pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow" } },
    }));
    const parent = await s.newSession("parent: spare");
    await s.say(parent, call("task_create", { title: "ticker", prompt: "REPLY tick", triggers: [{ every: "1s" }], notify: "never" }));
    const automation = /automation (au\w+)/.exec((await toolOutputs(s, parent, "task_create")).at(-1)!)?.[1];
    assert.ok(automation);

    const first = await launchTask(s, parent, { description: "first isolated", prompt: "REPLY one", isolation: "worktree" });
    await settled(s, first);
    const root = rootOf(s);
    const spare = await waitUntil(() => readySpare(root), { timeoutMs: 120_000, what: "a ready spare" });
    assert.equal(git(spare, "status", "--porcelain"), "", "booting OpenCode's instance there wrote nothing into it");
    const booted = (await s.server.logFile()).split("\n").filter((l) => l.includes('message="creating instance"') && l.endsWith(`directory=${spare}`));
    assert.equal(booted.length, 1, "OpenCode booted its instance for the spare's directory before any session there");

    // The spare's instance (and the first worktree's) start nothing: one run per occurrence, one project directory.
    const runs = () => queryDb<{ planned_at: number }>(pluginDbPath(s.server), "SELECT planned_at FROM automation_runs WHERE automation_id = ?", automation!);
    const before = runs().length;
    await waitUntil(() => runs().length >= before + 3 || undefined, { timeoutMs: 20_000, what: "three more runs" });
    await s.say(parent, call("task_update", { id: automation, enabled: false }));
    const planned = runs().map((r) => r.planned_at);
    assert.equal(new Set(planned).size, planned.length, `one run per occurrence: ${planned.join(", ")}`);
    assert.deepEqual(queryDb<{ directory: string }>(pluginDbPath(s.server), "SELECT directory FROM projects").map((p) => p.directory), [s.server.projectDir]);

    const second = await launchTask(s, parent, { description: "second isolated", prompt: call("write", { filePath: "in-spare.txt", content: "spare\n" }), isolation: "worktree" });
    await settled(s, second);
    const wt = JSON.parse(row(s, second)!.worktree!) as { path: string; branch: string };
    assert.equal(wt.path, spare, "the child works in the spare's directory");
    assert.match(wt.branch, /^bg\/\w+-second-isolated$/);
    const session = (await s.server.client.session.get({ path: { id: second } })).data as { directory: string };
    assert.equal(session.directory, spare);
    assert.equal(readFileSync(join(spare, "in-spare.txt"), "utf8"), "spare\n");
    assert.equal(git(spare, "log", "-1", "--format=%s"), `work in progress of task ${second} "second isolated"`);
    assert.ok(!existsSync(join(s.server.projectDir, "in-spare.txt")), "the checkout is untouched");
    assert.equal(existsSync(join(root, `.spare-${spare.slice(root.length + 1)}`)), false, "its marker went with it");
    // The next spare is being made: the server's folder is removed only once it is done.
    await waitUntil(() => (readySpare(root) && !readdirSync(root).some((n) => n.startsWith(".spare-making-"))) || undefined, { timeoutMs: 120_000, what: "the next spare" });
  });
});

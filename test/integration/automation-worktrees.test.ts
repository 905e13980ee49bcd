import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startStack, call, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";

/**
 * Automations with isolation "worktree" on the real host: each run's child works in a fresh
 * worktree of the default branch's latest commit; a run that changed nothing leaves no branch,
 * one that changed something names its branch in its history and its notification.
 */
describe("isolated automation runs on the real host", () => {
  let stack: Stack | undefined;
  after(async () => {
    await stack?.stop();
  });

  it("a run that writes leaves its branch, named in history and notification; a run that changes nothing leaves none", { timeout: 120_000 }, async () => {
    const s = (stack = await startStack({ config: { permission: { background_automation: "allow" } } }));
    const project = s.server.projectDir;
    const git = (...args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8" }).trim();
    // The checkout is on another branch with a commit of its own: runs start from the default branch's latest commit.
    const mainTip = git("rev-parse", "HEAD");
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "checkout", "-q", "-b", "side");
    writeFileSync(join(project, "side-only.txt"), "side\n");
    git("add", "side-only.txt");
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "side work");

    const parent = await s.newSession("parent: isolated automations");
    const create = async (title: string, prompt: string) => {
      await s.say(parent, call("task_create", { title, prompt, isolation: "worktree", notify: "always" }));
      const out = (await toolOutputs(s, parent, "task_create")).at(-1) ?? "";
      const id = /Created automation (au\w+)/.exec(out)?.[1];
      assert.ok(id, out);
      return id;
    };
    const writes = await create("writes a report", `CALL write ${JSON.stringify({ filePath: "auto-report.txt", content: "found 2\n" })}`);
    const quiet = await create("looks only", "REPLY nothing to change");

    const db = pluginDbPath(s.server);
    type RunRow = { status: string; branch: string | null; task_id: string; summary: string };
    const ended = (id: string) => waitUntil(() => {
      const r = queryDb<RunRow>(db, "SELECT status, branch, task_id, summary FROM automation_runs WHERE automation_id = ? AND run_no = 1", id)[0];
      return r && r.status !== "running" && r.status !== "starting" ? r : undefined;
    }, { timeoutMs: 30_000, what: `the run of ${id} to end` });
    const worktreeOf = (taskId: string) => JSON.parse(queryDb<{ worktree: string }>(db, "SELECT worktree FROM tasks WHERE id = ?", taskId)[0]!.worktree) as { path: string; branch: string; base: string };

    await s.say(parent, call("task_run", { id: writes }));
    const wrote = await ended(writes);
    assert.equal(wrote.status, "completed", wrote.summary);
    const wt = worktreeOf(wrote.task_id);
    assert.equal(wt.base, mainTip, "the run started from the default branch's latest commit, not the checkout's HEAD");
    assert.equal(wrote.branch, wt.branch);
    assert.match(wt.branch, /^bg\/\w+-writes-a-report/);
    assert.equal(git("show", `${wt.branch}:auto-report.txt`), "found 2");
    assert.throws(() => git("cat-file", "-e", `${wt.branch}:side-only.txt`), "the side branch's file is not in the run's branch");
    assert.equal(existsSync(join(project, "auto-report.txt")), false, "the main checkout is untouched");
    assert.equal(git("rev-parse", "--abbrev-ref", "HEAD"), "side");
    const told = await waitUntil(async () => (await s.notifications(parent)).find((n) => n.includes("writes a report")), { what: "the run's notification" });
    assert.match(told, new RegExp(`Its changes are on branch ${wt.branch.replace(/[/]/g, "\\/")}`));

    await s.say(parent, call("task_run", { id: quiet }));
    const looked = await ended(quiet);
    assert.equal(looked.status, "completed", looked.summary);
    assert.equal(looked.branch, null);
    const quietWt = worktreeOf(looked.task_id);
    await waitUntil(() => !existsSync(quietWt.path) || undefined, { what: "the unchanged run's worktree removed" });
    assert.deepEqual(git("branch", "--list", "bg/*", "--format=%(refname:short)").split("\n"), [wt.branch], "only the run that changed something left a branch");

    await s.say(parent, call("task_read", { id: writes }));
    assert.match((await toolOutputs(s, parent, "task_read")).at(-1) ?? "", new RegExp(`run #1 completed .*; branch ${wt.branch.replace(/[/]/g, "\\/")}`));
  });
  it("an isolated run's steps write in its worktree: the checkout is untouched and the branch holds the file", { timeout: 90_000 }, async () => {
    const s = stack!;
    const project = s.server.projectDir;
    const git = (...args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8" }).trim();
    const parent = await s.newSession("parent: isolated steps");
    const steps = [{ name: "write", run: "echo from-the-step > step-made.txt && pwd" }];
    await s.say(parent, call("task_create", { title: "step writes", prompt: "REPLY the step wrote", steps, isolation: "worktree", notify: "always" }));
    const out = (await toolOutputs(s, parent, "task_create")).at(-1) ?? "";
    const id = /Created automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, out);
    await s.say(parent, call("task_run", { id }));
    type RunRow = { status: string; branch: string | null; summary: string; steps: string };
    const run = await waitUntil(() => {
      const r = queryDb<RunRow>(pluginDbPath(s.server), "SELECT status, branch, summary, steps FROM automation_runs WHERE automation_id = ? AND run_no = 1", id)[0];
      return r && r.status !== "running" && r.status !== "starting" ? r : undefined;
    }, { timeoutMs: 30_000, what: "the run with steps to end" });
    assert.equal(run.status, "completed", run.summary);
    assert.equal(existsSync(join(project, "step-made.txt")), false, "the step did not write in the main checkout");
    assert.doesNotMatch(JSON.parse(run.steps)[0].tail, new RegExp(`^${project}$`), "the step's working directory was not the checkout");
    assert.match(run.branch ?? "", /^bg\/\w+-step-writes/);
    assert.equal(git("show", `${run.branch}:step-made.txt`), "from-the-step");
  });
});

import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { branchLeftBy } from "../../src/automations/run-worktree.ts";
import { checkIsolation } from "../../src/automations/definition-checks.ts";
import { toFields } from "../../src/tools/automation-args.ts";
import { runLine, runNoticeLine, runNotificationText } from "../../src/automations/automation-text.ts";
import { createWorktree } from "../../src/worktrees/worktrees.ts";
import type { Task } from "../../src/core/task.ts";
import type { Automation, Run } from "../../src/automations/automation.ts";
import { runningTask } from "../store/task-fixtures.ts";
import { commitFiles, gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

isolateGit();
const temp = tempDirs("automation-isolation-");
after(temp.cleanup);

async function isolatedTask(): Promise<{ repo: string; task: Task }> {
  const dir = temp.make();
  const repo = join(dir, "repo");
  mkdirSync(repo);
  initRepo(repo);
  const wt = await createWorktree({ repo, root: join(dir, "data", "worktrees", "p"), description: "nightly", from: "default-branch" });
  return { repo, task: runningTask("ses_run1", { status: "completed", description: "nightly (automation run #1)", worktree: wt }) };
}
const branches = (repo: string) => gitSync(repo, ["branch", "--format=%(refname:short)"]).split("\n");

describe("isolated automation runs", () => {
  it("a run that changed nothing leaves no worktree and no branch", async () => {
    const { repo, task } = await isolatedTask();
    assert.equal(await branchLeftBy(task), undefined);
    assert.equal(existsSync(task.worktree!.path), false);
    assert.ok(!branches(repo).includes(task.worktree!.branch));
  });

  it("a run that changed something keeps its branch, its uncommitted work committed on it", async () => {
    const { repo, task } = await isolatedTask();
    commitFiles(task.worktree!.path, { "report.md": "found 2\n" }, "child's commit");
    writeFileSync(join(task.worktree!.path, "notes.md"), "uncommitted\n");
    assert.equal(await branchLeftBy(task), task.worktree!.branch);
    assert.equal(gitSync(repo, ["show", `${task.worktree!.branch}:notes.md`]), "uncommitted");
    assert.ok(branches(repo).includes(task.worktree!.branch));
  });

  it("refuses isolation with a continued session or a worker, naming the fix; takes worktree and none", () => {
    assert.throws(() => checkIsolation({ isolation: "worktree", sessionMode: "continue" }), /each run a fresh worktree.*use session "fresh", or leave out isolation/);
    assert.throws(() => checkIsolation({ isolation: "worktree", sessionMode: "fresh", worker: "box" }), /leave out worker, or leave out isolation/);
    assert.doesNotThrow(() => checkIsolation({ isolation: "worktree", sessionMode: "fresh", worker: "local" }));
    assert.deepEqual(toFields({ isolation: "worktree" }), { isolation: "worktree" });
    assert.deepEqual(toFields({ isolation: "none" }), { isolation: undefined });
  });

  it("the run's history line and notification name the branch", () => {
    const a = { id: "auto_1", title: "nightly" } as Automation;
    const run: Run = { id: 1, automationId: "auto_1", runNo: 3, firedBy: "manual", status: "completed", createdAt: 0, startedAt: 0, endedAt: 2000, summary: "fixed it", branch: "bg/abc-nightly" };
    const outcome = { status: "completed" as const, result: "fixed it" };
    assert.match(runLine(run, []), /run #3 completed 2s, .*; branch bg\/abc-nightly: fixed it/);
    assert.match(runNoticeLine(a, run, outcome), /run #3 · branch bg\/abc-nightly · fixed it/);
    assert.match(runNotificationText(a, run, outcome, 1000), /Its changes are on branch bg\/abc-nightly \(git merge bg\/abc-nightly/);
    const { branch: _b, ...plain } = run;
    assert.doesNotMatch(runNotificationText(a, plain, outcome, 1000) + runLine(plain, []), /branch/);
  });
});

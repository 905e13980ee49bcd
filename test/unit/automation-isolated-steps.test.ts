import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { parseSteps, type StepInput } from "../../src/automations/step-spec.ts";
import type { AutomationFields } from "../../src/automations/automation-catalog.ts";
import type { Run } from "../../src/automations/automation.ts";
import type { ChannelNotice } from "../../src/channels/channel-message.ts";
import { worktreeSupport } from "../../src/plugin/worktree-support.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

isolateGit();
const temp = tempDirs("auto-isolated-steps-");
after(temp.cleanup);

/** A git project (or a plain folder, `git: false`) with the automation layer on a fake host; worktrees under its own root. */
function setup({ git = true, sub = "" } = {}) {
  const dir = temp.make();
  const top = join(dir, "repo");
  const repo = join(top, sub);
  const root = join(dir, "data", "worktrees");
  mkdirSync(repo, { recursive: true });
  if (git) initRepo(top, sub ? { [`${sub}/package.json`]: "{}\n" } : undefined);
  const db = tempDb();
  const sent: ChannelNotice[] = [];
  const channels = { names: () => ["team"], enqueue: (notice: ChannelNotice) => void sent.push(notice), statusLines: () => [] };
  const f = automationFixture(db.path, {}, { loaders: {} as never, directory: repo, channels, worktrees: worktreeSupport(repo, () => root) });
  after(() => { f.close(); db.cleanup(); });
  f.host.setActivity(PARENT, "idle");
  f.runs.start();
  const isolated = (steps: StepInput[], fields: Partial<AutomationFields> = {}) =>
    f.create({ prompt: "", steps: parseSteps(steps), isolation: "worktree", channels: ["team"], ...fields });
  const runToEnd = async (id: string): Promise<Run> => {
    const { run } = await f.runs.runNow(id);
    return waitFor(() => { const r = f.autoStore.run(run.id)!; return ["starting", "running"].includes(r.status) ? undefined : r; }, "the run to end", 10_000);
  };
  /** The worktree folders left under the root (the spare-checkout bookkeeping aside). */
  const worktreesLeft = () => (existsSync(root) ? readdirSync(root).filter((n) => !n.startsWith(".")) : []);
  const branches = () => gitSync(repo, ["branch", "--format=%(refname:short)"]).split("\n");
  return { f, repo, sent, isolated, runToEnd, worktreesLeft, branches };
}

describe("isolated automation runs with steps", () => {
  it("a step's file lands on the run's branch, not in the checkout; the worktree goes; history and channel name the branch", async () => {
    const { repo, sent, isolated, runToEnd, worktreesLeft, branches } = setup();
    const a = isolated([{ name: "write", run: 'echo "from the step" > made.txt && pwd' }]);
    const run = await runToEnd(a.id);
    assert.equal(run.status, "completed", run.summary);
    assert.equal(existsSync(join(repo, "made.txt")), false, "the checkout is untouched");
    assert.match(run.steps![0]!.tail ?? "", /\/data\/worktrees\/[0-9a-f]{8}-check-ci-automation-run-1$/, "the step ran in the run's worktree");
    assert.match(run.branch ?? "", /^bg\/run\d+-check-ci-automation-run-1$/);
    assert.ok(branches().includes(run.branch!));
    assert.equal(gitSync(repo, ["show", `${run.branch}:made.txt`]), "from the step");
    assert.match(gitSync(repo, ["log", "-1", "--format=%s", run.branch!]), /^work in progress of automation run \d+ "check ci \(automation run #1\)"$/);
    assert.deepEqual(worktreesLeft(), [], "no task holds the worktree: its directory is removed");
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.branch, run.branch);
    assert.equal(sent[0]!.result.split("\n")[0], `Changes on branch ${run.branch}.`);
  });

  it("steps that change nothing leave no worktree and no branch, and no branch is named", async () => {
    const { sent, isolated, runToEnd, worktreesLeft, branches } = setup();
    const before = branches();
    const run = await runToEnd(isolated([{ name: "look", run: "ls" }]).id);
    assert.equal(run.status, "completed");
    assert.equal(run.branch, undefined);
    assert.deepEqual(branches(), before);
    assert.deepEqual(worktreesLeft(), []);
    assert.doesNotMatch(sent[0]!.result, /branch/);
  });

  it("a failed step's work is kept on the branch too (the run failed, nothing is lost)", async () => {
    const { repo, isolated, runToEnd } = setup();
    const run = await runToEnd(isolated([{ name: "half", run: "echo half > half.txt; exit 3" }]).id);
    assert.equal(run.status, "error");
    assert.equal(gitSync(repo, ["show", `${run.branch}:half.txt`]), "half");
  });

  it("the run's task starts in the same worktree, after the steps; its settle keeps the steps' work on its branch", async () => {
    const { f, repo, isolated, worktreesLeft } = setup();
    const a = isolated([{ name: "prep", run: "echo prepared > prep.txt" }], { prompt: "fix what prep found", promptWhen: "always" });
    const { run: started } = await f.runs.runNow(a.id);
    const task = await waitFor(() => { const id = f.autoStore.run(started.id)!.taskId; return id ? f.manager.get(id) : undefined; }, "the run's task", 10_000);
    assert.ok(task.worktree, "the task is isolated");
    assert.equal(existsSync(join(task.worktree.path, "prep.txt")), true, "the steps ran in the task's worktree");
    assert.equal(existsSync(join(repo, "prep.txt")), false);
    assert.deepEqual(worktreesLeft().length, 1, "one worktree for the run: the steps' is the task's");
    f.host.finishRun(task.id, "fixed");
    const run = await waitFor(() => { const r = f.autoStore.run(started.id)!; return r.status === "completed" ? r : undefined; }, "the run to end", 10_000);
    assert.equal(run.branch, f.manager.get(task.id)!.worktree!.branch);
    assert.equal(gitSync(repo, ["show", `${run.branch}:prep.txt`]), "prepared");
  });

  it("a project that is a subfolder of its repository: the steps run in the same subfolder of the worktree", async () => {
    const { repo, isolated, runToEnd } = setup({ sub: "packages/app" });
    const run = await runToEnd(isolated([{ name: "write", run: "echo sub > made.txt && pwd" }]).id);
    assert.equal(run.status, "completed", run.summary);
    assert.match(run.steps![0]!.tail ?? "", /\/data\/worktrees\/[^/]+\/packages\/app$/);
    assert.equal(gitSync(repo, ["show", `${run.branch}:packages/app/made.txt`]), "sub");
    assert.equal(existsSync(join(repo, "made.txt")), false);
  });

  it("no worktree can be made (not a git repository): the run fails with the reason and no step runs", async () => {
    const { repo, isolated, runToEnd } = setup({ git: false });
    const run = await runToEnd(isolated([{ name: "write", run: "echo x > ran.txt" }]).id);
    assert.equal(run.status, "error");
    assert.match(run.summary ?? "", /worktree could not be made, so nothing ran: .*not a git repository/);
    assert.equal(existsSync(join(repo, "ran.txt")), false, "the step never ran in the checkout");
    assert.equal(run.steps![0]!.status, "not_run");
  });
});

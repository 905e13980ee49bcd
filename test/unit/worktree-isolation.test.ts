import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Hooks } from "@opencode-ai/plugin";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { TaskError } from "../../src/core/errors.ts";
import { WorktreeTamperedError, type WorktreeSupport } from "../../src/core/task-worktree.ts";
import { activeInstance, registerActive } from "../../src/plugin/instances.ts";
import { passiveHooks } from "../../src/plugin/passive-instance.ts";
import { changesBlock, shortTaskId, worktreeSupport } from "../../src/plugin/worktree-support.ts";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

/** A WorktreeSupport that records what the core asked of git. */
function fakeWorktrees(opts: { refuse?: string; tampered?: string } = {}) {
  const calls: string[] = [];
  let n = 0;
  const support: WorktreeSupport = {
    async create(description) {
      calls.push(`create ${description}`);
      if (opts.refuse) throw new TaskError(opts.refuse);
      n++;
      return { path: `/data/worktrees/p/wt${n}`, branch: `bg/new-${n}`, base: "abc1234def", repo: "/project" };
    },
    async name(wt, taskId, description) {
      calls.push(`name ${taskId}`);
      return { ...wt, branch: `bg/${shortTaskId(taskId)}-${description.replaceAll(" ", "-")}` };
    },
    async remove(wt) {
      calls.push(`remove ${wt.path}`);
    },
    async settle(task) {
      calls.push(`settle ${task.id}`);
      if (opts.tampered) throw new WorktreeTamperedError(opts.tampered);
      return `Worktree: branch ${task.worktree!.branch}, 1 commit(s):\n  1234567 work in progress of task ${task.id}\n a.txt | 1 +`;
    },
  };
  return { support, calls };
}

/** A core fixture whose host remembers in which directory each session was created. */
function isolatedFixture(opts: { refuse?: string; tampered?: string } = {}) {
  const wt = fakeWorktrees(opts);
  const f = coreFixture({}, new MemoryTaskStore(), { worktrees: wt.support });
  const created: { title: string; directory?: string }[] = [];
  const createSession = f.host.createSession.bind(f.host);
  f.host.createSession = async (input: { parentID?: string; title: string; directory?: string }) => {
    created.push({ title: input.title, directory: input.directory });
    return createSession(input);
  };
  return { ...f, wt, created };
}

describe("isolated tasks in the core", () => {
  it("a worktree is made, the child's session is created in it, its branch named after the task", async () => {
    const f = isolatedFixture();
    const out = await f.call("background_task", { description: "fix it", prompt: "p", agent: "general", isolation: "worktree" });
    const id = /task_id: (\S+)/.exec(out)![1]!;
    assert.deepEqual(f.wt.calls, ["create fix it", `name ${id}`]);
    assert.equal(f.created[0]!.directory, "/data/worktrees/p/wt1");
    const wt = f.store.get(id)!.worktree!;
    assert.equal(wt.branch, `bg/${shortTaskId(id)}-fix-it`);
    assert.match(out, /worktree: \/data\/worktrees\/p\/wt1 \(branch bg\/\S+-fix-it, from HEAD abc1234\)\. Uncommitted changes of your checkout are not carried over/);
  });

  it("without isolation nothing is made and the child works in the project", async () => {
    const f = isolatedFixture();
    const id = await f.launch();
    assert.deepEqual(f.wt.calls, []);
    assert.equal(f.created[0]!.directory, undefined);
    assert.equal(f.store.get(id)!.worktree, undefined);
  });

  it("a task launched by an isolated child works in the same worktree and owns none", async () => {
    const f = isolatedFixture();
    const child = await f.launch({ isolation: "worktree" });
    const nested = await f.launch({ description: "helper", isolation: "worktree" }, { sessionID: child, messageID: "msg_c1" });
    assert.equal(f.created[1]!.directory, "/data/worktrees/p/wt1");
    assert.equal(f.store.get(nested)!.worktree, undefined);
    assert.equal(f.wt.calls.filter((c) => c.startsWith("create")).length, 1);
    assert.equal(f.manager.runningTasks().directoryOf(nested), "/data/worktrees/p/wt1");
  });

  it("in a worktree of a repository whose subfolder is the project, the child and its tasks work in that subfolder", async () => {
    const f = isolatedFixture();
    f.wt.support.create = async () => ({ path: "/data/wt9", workdir: "/data/wt9/packages/app", branch: "bg/new-9", base: "abc1234def", repo: "/mono" });
    const child = await f.launch({ isolation: "worktree" });
    const nested = await f.launch({ description: "helper" }, { sessionID: child, messageID: "msg_c1" });
    assert.deepEqual(f.created.map((c) => c.directory), ["/data/wt9/packages/app", "/data/wt9/packages/app"]);
    assert.equal(f.manager.runningTasks().directoryOf(child), "/data/wt9/packages/app");
    assert.equal(f.manager.runningTasks().directoryOf(nested), "/data/wt9/packages/app");
  });

  it("a project that is not a git repository is refused with the fix; nothing is created or stored", async () => {
    const f = isolatedFixture({ refuse: "/p is not a git repository, so isolation \"worktree\" cannot be used. Run `git init` there and commit, or leave out isolation." });
    const out = await f.call("background_task", { description: "x", prompt: "p", agent: "general", isolation: "worktree" });
    assert.match(out, /^background_task: \/p is not a git repository/);
    assert.deepEqual(f.created, []);
    assert.equal(f.store.list({ includeCleared: true }).length, 0);
  });

  it("isolation on a named worker is refused before anything is made", async () => {
    const f = isolatedFixture();
    const out = await f.call("background_task", { description: "x", prompt: "p", agent: "general", isolation: "worktree", worker: "far" });
    assert.match(out, /cannot run on worker "far"/);
    assert.deepEqual(f.wt.calls, []);
  });

  it("a child session that cannot be created leaves no worktree behind", async () => {
    const f = isolatedFixture();
    f.host.createSession = async () => {
      throw new Error("OpenCode refused to create a child session (HTTP 500)");
    };
    const out = await f.call("background_task", { description: "x", prompt: "p", agent: "general", isolation: "worktree" });
    assert.match(out, /failed/);
    assert.deepEqual(f.wt.calls, ["create x", "remove /data/worktrees/p/wt1"]);
  });

  it("at settle the work is committed and the parent's notice carries the Worktree block", async () => {
    const f = isolatedFixture();
    const id = await f.launch({ isolation: "worktree" });
    f.host.finishRun(id, "all done");
    await f.flush();
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const task = f.store.get(id)!;
    assert.equal(task.status, "completed");
    assert.ok(f.wt.calls.includes(`settle ${id}`));
    assert.match(task.worktree!.changes!, /^Worktree: branch bg\//);
    const told = f.host.promptsTo(PARENT).map((p) => p.text).join("\n");
    assert.match(told, /all done[\s\S]*Worktree: branch bg\/\S+, 1 commit\(s\):\n  1234567 work in progress/);
    assert.match(await f.call("background_output", { task_id: id }), /runs in worktree \/data\/worktrees\/p\/wt1[\s\S]*a\.txt \| 1 \+/);
  });

  it("a child that rewrote its worktree's .git: the task settles as an error naming the tampering, and the parent hears it", async () => {
    const f = isolatedFixture({ tampered: "worktree_tampered: /data/worktrees/p/wt1/.git no longer points at its git dir" });
    const id = await f.launch({ isolation: "worktree" });
    f.host.finishRun(id, "all done");
    await f.flush();
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const task = f.store.get(id)!;
    assert.equal(task.status, "error");
    assert.match(task.error!, /^worktree_tampered: \/data\/worktrees\/p\/wt1\/\.git no longer points/);
    assert.match(task.worktree!.changes!, /worktree_tampered/);
    assert.match(f.host.promptsTo(PARENT).map((p) => p.text).join("\n"), /worktree_tampered/);
  });

  it("a cancelled isolated task's work is committed too, telling nobody", async () => {
    const f = isolatedFixture();
    const id = await f.launch({ isolation: "worktree" });
    await f.call("background_cancel", { task_id: id });
    await f.flush();
    assert.ok(f.wt.calls.includes(`settle ${id}`));
    assert.match(f.store.get(id)!.worktree!.changes!, /Worktree: branch/);
  });

  it("a task whose worktree was removed is not resumed", async () => {
    const f = isolatedFixture();
    const id = await f.launch({ isolation: "worktree" });
    f.host.finishRun(id, "done");
    await f.flush();
    const task = f.store.get(id)!;
    f.store.save({ ...task, worktree: { ...task.worktree!, removed: { at: 1, by: "discard", branchKept: false } } });
    const out = await f.call("background_task", { description: "again", prompt: "more", agent: "general", resume: id });
    assert.match(out, /worktree was removed \(by discard\), so it cannot be resumed/);
  });
});

describe("the passive instance of a worktree directory", () => {
  it("forwards hooks and tools to the project's active instance, found at call time", async () => {
    const heard: string[] = [];
    const active: Hooks = {
      tool: { background_list: { description: "list", args: {}, execute: async (_a, ctx) => `listed for ${(ctx as { sessionID: string }).sessionID}` } },
      event: async ({ event }) => void heard.push(event.type),
      "tool.execute.before": async (call) => void heard.push(`before ${call.tool}`),
      "chat.params": async (input) => void heard.push(`request of ${input.sessionID}`),
    };
    const forget = registerActive("proj-fwd", active);
    try {
      const passive = passiveHooks("proj-fwd", ["background_list"], () => undefined);
      assert.equal(passive.tool!.background_list!.description, "list", "the model in the worktree sees the same tools");
      assert.equal(await passive.tool!.background_list!.execute({} as never, { sessionID: "ses_child" } as never), "listed for ses_child");
      await passive.event!({ event: { type: "session.idle", properties: { sessionID: "ses_child" } } as never });
      await passive["tool.execute.before"]!({ tool: "write", sessionID: "ses_child", callID: "c" }, { args: {} });
      await passive["chat.params"]!({ sessionID: "ses_child" } as never, {} as never);
      assert.deepEqual(heard, ["session.idle", "before write", "request of ses_child"]);
    } finally {
      forget();
    }
    assert.equal(activeInstance("proj-fwd"), undefined);
  });

  it("without an active instance its tools say why and its events are dropped", async () => {
    const passive = passiveHooks("proj-none", ["background_task"], () => undefined);
    assert.match(String(await passive.tool!.background_task!.execute({} as never, {} as never)), /^background_task: Background tasks are unavailable in this directory: it is the git worktree of a background task/);
    await passive.event!({ event: { type: "session.idle", properties: {} } as never });
  });
});

describe("the result's Worktree block", () => {
  it("names the branch, its commits and the diff stat, capped", () => {
    const commits = Array.from({ length: 12 }, (_, i) => ({ sha: `${i}`.padStart(40, "a"), subject: `commit ${i}` }));
    const block = changesBlock({ branch: "bg/x-y", commits, diffStat: " a.txt | 1 +\n 1 file changed, 1 insertion(+)", changed: true });
    assert.match(block, /^Worktree: branch bg\/x-y, 12 commit\(s\):\n  aaaaaaa commit 0/);
    assert.match(block, /… 2 more\n a\.txt \| 1 \+\n 1 file changed/);
    assert.equal(changesBlock({ branch: "bg/x-y", commits: [], diffStat: "", changed: false }), "Worktree: branch bg/x-y, no changes.");
  });
});

describe("the worktree support on a real repository (an attacker's description)", () => {
  isolateGit();
  const dirs = tempDirs("ocbt-wtsup-");

  it("a hostile description names nothing outside the root, passes no option to git, and commits the child's work", async () => {
    const repo = dirs.make();
    initRepo(repo);
    const root = join(dirs.make(), "worktrees", "p");
    const support = worktreeSupport(repo, () => root);
    const hostile = "--upload-pack=touch /tmp/pwned; $(rm -rf ~) ../../etc `id` -b x";
    try {
      const made = await support.create(hostile, "head");
      assert.equal(join(made.path, ".."), root, "directly under the root");
      const named = await support.name(made, "ses_de5a91a35ffedIUq4G6t79teC9", hostile);
      assert.match(named.branch, /^bg\/de5a91a35ffe-[a-z0-9-]+$/);
      assert.deepEqual(readdirSync(root).filter((f) => !f.startsWith(".")), [made.path.slice(root.length + 1)]);
      assert.ok(!existsSync("/tmp/pwned"));
      writeFileSync(join(named.path, "work.txt"), "done\n");
      const block = await support.settle({ id: "ses_x", description: hostile, worktree: named } as never);
      assert.match(block, new RegExp(`^Worktree: branch ${named.branch.replace("/", "\\/")}, 1 commit\\(s\\):\n  [0-9a-f]{7} work in progress of task ses_x "--upload-pack`));
      assert.match(block, /work\.txt \| 1 \+/);
      assert.equal(gitSync(repo, ["branch", "--list", "--format=%(refname:short)", "bg/*"]), named.branch);
      assert.equal(gitSync(repo, ["status", "--porcelain"]), "", "the main checkout is untouched");
    } finally {
      dirs.cleanup();
    }
  });

  it("a project that is a subfolder of its repository works in the same subfolder of the worktree", async () => {
    const repo = dirs.make();
    initRepo(repo, { "README.md": "top\n", "packages/app/index.ts": "x\n" });
    const root = join(dirs.make(), "worktrees", "p");
    try {
      const made = await worktreeSupport(join(repo, "packages", "app"), () => root).create("sub", "head");
      assert.equal(made.workdir, join(made.path, "packages", "app"));
      assert.ok(existsSync(join(made.workdir!, "index.ts")));
      const top = await worktreeSupport(repo, () => root).create("top", "head");
      assert.equal(top.workdir, undefined, "the repository's top level works at the worktree's");
    } finally {
      dirs.cleanup();
    }
  });
});

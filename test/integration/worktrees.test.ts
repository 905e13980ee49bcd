import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, renameSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { startStack, call, launchTask, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, trailingToolResults, type MockRequest } from "../harness/mock-model.ts";

/**
 * Isolated tasks (isolation "worktree") on the real host: the child's session is created in a git
 * worktree of its own, OpenCode starts the plugin again for that directory (passive: it forwards
 * to this project's instance), and the result says what changed on the task's branch.
 */
describe("isolated tasks on the real host", () => {
  let shared: Stack | undefined;
  /** The first server's mock model, kept by the restarted server and closed here. */
  let keptMock: { close(): Promise<void> } | undefined;
  after(async () => {
    await shared?.stop();
    await keptMock?.close();
  });
  const options = {
    pluginOptions: { pollIntervalMs: 500 },
    config: { permission: { background_automation: "allow" } },
    // A child told to go on after a restart writes a file, to show where it works then.
    responder: (req: MockRequest) => /OpenCode was restarted/.test(lastUserText(req)) && trailingToolResults(req).length === 0
      ? { toolCalls: [{ name: "write", args: { filePath: "after-restart.txt", content: "again\n" } }] }
      : defaultResponder(req),
  };
  const stack = async () => (shared ??= await startStack(options));

  type Row = { status: string; result: string | null; error: string | null; worktree: string | null; tool_calls: number };
  const row = (s: Stack, id: string) => queryDb<Row>(pluginDbPath(s.server), "SELECT status, result, error, worktree, tool_calls FROM tasks WHERE id = ?", id)[0];
  const worktreeOf = (s: Stack, id: string) => JSON.parse(row(s, id)!.worktree!) as { path: string; branch: string; base: string; changes?: string };
  const settled = (s: Stack, id: string, status = "completed") =>
    waitUntil(() => (row(s, id)?.status === status ? row(s, id) : undefined), { timeoutMs: 30_000, what: `task ${id} ${status}` });
  const told = async (s: Stack, parent: string, id: string) => (await s.notifications(parent)).filter((n) => n.includes(`task_id="${id}"`));
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
  const worktreesDir = (s: Stack) => join(dirname(pluginDbPath(s.server)), "worktrees");
  const write = (filePath: string, content: string) => call("write", { filePath, content });

  it("refuses isolation in a project that is not a git repository, and creates nothing", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: not git");
    const dotGit = join(s.server.projectDir, ".git");
    renameSync(dotGit, `${dotGit}-away`);
    try {
      await s.say(parent, call("background_task", { description: "try isolation", prompt: "REPLY never", agent: "general", isolation: "worktree" }));
    } finally {
      renameSync(`${dotGit}-away`, dotGit);
    }
    const [out] = await toolOutputs(s, parent, "background_task");
    assert.match(out, /is not a git repository, so isolation "worktree" cannot be used\. Run `git init` there and commit, or leave out isolation\./);
    assert.doesNotMatch(out, /task_id:/);
    assert.equal(queryDb(pluginDbPath(s.server), "SELECT id FROM tasks").length, 0, "no task stored");
    assert.ok(!existsSync(worktreesDir(s)) || readdirSync(worktreesDir(s)).length === 0, "no worktree folder");
    assert.equal(git(s.server.projectDir, "branch", "--list", "bg/*"), "", "no branch");
  });

  it("an isolated child works in its own worktree; the parent is told once with the branch's changes; resume keeps the worktree", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: isolated");
    const prompt = [write("made-in-wt.txt", "from the child\n"), call("background_list", {})].join("\n");
    const launchOut = async () => (await toolOutputs(s, parent, "background_task")).at(-1)!;
    // The expectation is judged in the worktree: in the main checkout the file does not exist.
    const expect = { files: ["made-in-wt.txt"], command: "test -f made-in-wt.txt" };
    const id = await launchTask(s, parent, { description: "write in a worktree", prompt, isolation: "worktree", expect });
    assert.match(await launchOut(), /Uncommitted changes of your checkout are not carried over/);
    const wt = worktreeOf(s, id);
    assert.ok(wt.path.startsWith(worktreesDir(s)), `the worktree is under the plugin's data folder: ${wt.path}`);
    assert.match(wt.branch, /^bg\/\w+-write-in-a-worktree$/);

    const session = (await s.server.client.session.get({ path: { id } })).data as { directory: string };
    assert.equal(session.directory, wt.path, "the child's session works in the worktree");

    const done = await settled(s, id);
    assert.equal(readFileSync(join(wt.path, "made-in-wt.txt"), "utf8"), "from the child\n");
    assert.ok(!existsSync(join(s.server.projectDir, "made-in-wt.txt")), "the main checkout is untouched");
    assert.equal(git(s.server.projectDir, "status", "--porcelain"), "");
    assert.ok(done.tool_calls >= 2, "the worktree's events reached this project's instance (tool calls counted)");
    // background_list ran in the worktree's plugin instance and was answered by the active one.
    const listed = (await toolOutputs(s, id, "background_list")).join("\n");
    assert.doesNotMatch(listed, /unavailable/);

    const notes = await waitUntil(async () => {
      const found = await told(s, parent, id);
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 20_000, what: "the parent's notice" });
    assert.equal(notes.length, 1, "told once");
    assert.match(notes[0]!, new RegExp(`Worktree: branch ${wt.branch.replace("/", "\\/")}, 1 commit\\(s\\):`));
    assert.match(notes[0]!, /work in progress of task/);
    assert.match(notes[0]!, /made-in-wt\.txt \| 1 \+/);
    assert.equal(git(wt.path, "status", "--porcelain"), "", "the child's work was committed on its branch");

    await s.say(parent, call("background_task", { description: "more", prompt: write("second.txt", "again\n"), agent: "general", resume: id }));
    assert.match((await toolOutputs(s, parent, "background_task")).at(-1)!, /Resumed background task/);
    await waitUntil(async () => (await told(s, parent, id)).length === 2, { timeoutMs: 30_000, what: "the resumed run's notice" });
    assert.ok(existsSync(join(wt.path, "second.txt")), "the resumed run worked in the same worktree");
    assert.ok(!existsSync(join(s.server.projectDir, "second.txt")));
    assert.equal(worktreeOf(s, id).path, wt.path);
    assert.match(worktreeOf(s, id).changes!, /2 commit\(s\)/);
  });

  it("a forked isolated child gets the conversation and works in its worktree", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: fork");
    await s.say(parent, "REPLY remember the word heron");
    const id = await launchTask(s, parent, { description: "forked one", prompt: write("forked.txt", "f\n"), fork: true, isolation: "worktree" });
    const wt = worktreeOf(s, id);
    const session = (await s.server.client.session.get({ path: { id } })).data as { directory: string };
    assert.equal(session.directory, wt.path);
    await settled(s, id);
    assert.ok(existsSync(join(wt.path, "forked.txt")));
    assert.ok(!existsSync(join(s.server.projectDir, "forked.txt")));
    const copied = (await s.messages(id)).flatMap((m) => m.parts).some((p) => p.type === "text" && String(p.text).includes("heron"));
    assert.ok(copied, "the fork holds the parent's conversation");
  });

  it("a task launched by an isolated child works in the same worktree", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: nested");
    const nestedCall = call("background_task", { description: "nested helper", prompt: write("nested.txt", "deep\n"), agent: "general" });
    const id = await launchTask(s, parent, { description: "launches a helper", prompt: nestedCall, isolation: "worktree" });
    const wt = worktreeOf(s, id);
    await settled(s, id);
    const [nested] = [...(await toolOutputs(s, id, "background_task")).join("\n").matchAll(/task_id: (ses_\w+)/g)].map((m) => m[1]!);
    assert.ok(nested, "the child launched its own task (a tool call forwarded by the worktree's instance)");
    const session = (await s.server.client.session.get({ path: { id: nested } })).data as { directory: string };
    assert.equal(session.directory, wt.path);
    assert.equal(readFileSync(join(wt.path, "nested.txt"), "utf8"), "deep\n");
    assert.ok(!existsSync(join(s.server.projectDir, "nested.txt")));
    assert.equal(row(s, nested)!.worktree, null, "it owns no worktree");
  });

  it("two isolated children write the same file differently: both succeed, each result shows its own branch", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: two");
    await s.say(parent, [
      call("background_task", { description: "version a", prompt: write("same.txt", "A\n"), agent: "general", isolation: "worktree" }),
      call("background_task", { description: "version b", prompt: write("same.txt", "B\n"), agent: "general", isolation: "worktree" }),
    ].join("\n"));
    const ids = [...(await toolOutputs(s, parent, "background_task")).join("\n").matchAll(/task_id: (ses_\w+)/g)].map((m) => m[1]!);
    assert.equal(ids.length, 2, (await toolOutputs(s, parent, "background_task")).join("\n---\n"));
    for (const id of ids) await settled(s, id);
    const [a, b] = ids.map((id) => worktreeOf(s, id));
    assert.notEqual(a!.path, b!.path);
    assert.equal(readFileSync(join(a!.path, "same.txt"), "utf8"), "A\n");
    assert.equal(readFileSync(join(b!.path, "same.txt"), "utf8"), "B\n");
    assert.ok(!existsSync(join(s.server.projectDir, "same.txt")));
    for (const wt of [a!, b!]) {
      assert.match(wt.changes!, new RegExp(`branch ${wt.branch.replace("/", "\\/")},`));
      assert.match(wt.changes!, /same\.txt \| 1 \+/);
    }
    assert.match(git(s.server.projectDir, "show", `${a!.branch}:same.txt`), /^A$/);
    assert.match(git(s.server.projectDir, "show", `${b!.branch}:same.txt`), /^B$/);
  });

  it("the worktree's plugin instance starts nothing: an automation due every second fires once per occurrence", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: automation");
    await s.say(parent, call("task_create", { title: "ticker", prompt: "REPLY tick", triggers: [{ every: "1s" }], notify: "never" }));
    const created = (await toolOutputs(s, parent, "task_create")).at(-1)!;
    const automation = /automation (au\w+)/.exec(created)?.[1];
    assert.ok(automation, created);
    const id = await launchTask(s, parent, { description: "slow isolated", prompt: `SLOW 3000\n${write("slow.txt", "x\n")}`, isolation: "worktree" });
    await settled(s, id);
    const runs = () => queryDb<{ planned_at: number }>(pluginDbPath(s.server), "SELECT planned_at FROM automation_runs WHERE automation_id = ?", automation!);
    await waitUntil(() => runs().length >= 4, { timeoutMs: 20_000, what: "four runs" });
    await s.say(parent, call("task_update", { id: automation, enabled: false }));
    const planned = runs().map((r) => r.planned_at);
    assert.equal(new Set(planned).size, planned.length, `one run per occurrence: ${planned.join(", ")}`);
    // A second instance opening the store would have recorded the worktree as the project's directory.
    const projects = queryDb<{ directory: string }>(pluginDbPath(s.server), "SELECT directory FROM projects");
    assert.deepEqual(projects.map((p) => p.directory), [s.server.projectDir]);
  });

  // Last: it replaces the shared server by a restarted one.
  it("an isolated child cut off by a restart goes on in its worktree; the parent hears once", async () => {
    const first = await stack();
    const parent = await first.newSession("parent: restart");
    const id = await launchTask(first, parent, { description: "survives a restart", prompt: "SLOW 20000\nREPLY never, the server dies", isolation: "worktree" });
    const wt = worktreeOf(first, id);
    await waitUntil(() => first.mock.inFlight().current > 0, { what: "the child's model call in flight" });
    await first.server.kill();
    first.events.close();
    keptMock = first.mock;
    const second = (shared = await startStack({ ...options, mock: first.mock, reuse: { homeDir: first.server.homeDir, projectDir: first.server.projectDir } }));
    await settled(second, id);
    assert.equal(readFileSync(join(wt.path, "after-restart.txt"), "utf8"), "again\n");
    assert.ok(!existsSync(join(second.server.projectDir, "after-restart.txt")));
    const notes = await waitUntil(async () => {
      const found = (await told(second, parent, id)).filter((n) => n.includes('status="completed"'));
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 20_000, what: "the completed notice" });
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /after-restart\.txt \| 1 \+/);
  });
});

import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import {
  startStack, call, toolOutputs, waitUntil, pluginDbPath, queryDb, pendingPermissions, answerPermission, taskIdsIn, MOCK_MODEL, type Stack,
} from "../harness/plugin-stack.ts";

/**
 * The way back from isolated tasks on the real host: background_merge merges a task's branch into
 * the main checkout (asking OpenCode's permission first), refuses a conflicting one with nothing
 * changed and nothing asked, discards; background_clear removes worktrees but keeps a branch with
 * unmerged commits.
 */
describe("merging, discarding and clearing isolated tasks on the real host", () => {
  let shared: Stack | undefined;
  after(async () => {
    await shared?.stop();
  });
  const stack = async () => (shared ??= await startStack({ pluginOptions: { pollIntervalMs: 500 } }));

  type Row = { status: string; worktree: string | null };
  const row = (s: Stack, id: string) => queryDb<Row>(pluginDbPath(s.server), "SELECT status, worktree FROM tasks WHERE id = ?", id)[0];
  const worktreeOf = (s: Stack, id: string) => JSON.parse(row(s, id)!.worktree!) as { path: string; branch: string; base: string; removed?: { by: string; branchKept: boolean } };
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
  const branchExists = (s: Stack, branch: string) => git(s.server.projectDir, "branch", "--list", branch) !== "";
  const write = (filePath: string, content: string) => call("write", { filePath, content });
  /** What a refusal must leave as it was: HEAD, a clean status, the file. */
  const checkout = (s: Stack) => ({
    head: git(s.server.projectDir, "rev-parse", "HEAD"),
    status: git(s.server.projectDir, "status", "--porcelain"),
    same: readFileSync(join(s.server.projectDir, "same.txt"), "utf8"),
  });

  const idle = (s: Stack, session: string) =>
    waitUntil(async () => (await s.server.client.session.status()).data?.[session] === undefined, { timeoutMs: 20_000, what: "parent idle" });

  /** Isolated children launched in one message; returns their ids once each settled and the parent heard of all. */
  async function launchIsolated(s: Stack, parent: string, children: { description: string; prompt: string }[]): Promise<string[]> {
    await s.say(parent, children.map((c) => call("background_task", { ...c, agent: "general", isolation: "worktree" })).join("\n"));
    const ids = taskIdsIn((await toolOutputs(s, parent, "background_task")).slice(-children.length).join("\n"));
    assert.equal(ids.length, children.length);
    for (const id of ids) await waitUntil(() => row(s, id)?.status === "completed", { timeoutMs: 30_000, what: `task ${id} completed` });
    // The notices take the parent's turn: wait for them before its next call.
    await waitUntil(async () => {
      const notes = (await s.notifications(parent)).join("\n");
      return ids.every((id) => notes.includes(`task_id="${id}"`));
    }, { timeoutMs: 20_000, what: "the parent's notices" });
    await idle(s, parent);
    return ids;
  }

  /** The parent's model calls background_merge; the user answers OpenCode's prompt (none expected: `answer` undefined). */
  async function mergeCall(s: Stack, parent: string, args: { task_id: string; action: string }, answer?: "once" | "reject") {
    const before = (await toolOutputs(s, parent, "background_merge")).length;
    void s.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("background_merge", args) }] },
    });
    let asked: Awaited<ReturnType<typeof pendingPermissions>>[number] | undefined;
    if (answer) {
      asked = await waitUntil(async () => (await pendingPermissions(s)).find((p) => p.sessionID === parent), { timeoutMs: 15_000, what: "permission prompt" });
      await answerPermission(s, asked.id, answer);
    }
    const out = await waitUntil(async () => (await toolOutputs(s, parent, "background_merge"))[before], { timeoutMs: 20_000, what: "background_merge output" });
    await idle(s, parent);
    return { out, asked };
  }

  it("merges the first of two children that wrote the same file; the second reports the conflict and changes nothing; a rejected discard changes nothing; discard removes worktree and branch", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: merge");
    const [a, b] = await launchIsolated(s, parent, [
      { description: "version a", prompt: write("same.txt", "A\n") },
      { description: "version b", prompt: write("same.txt", "B\n") },
    ]);
    const wa = worktreeOf(s, a!);
    const wb = worktreeOf(s, b!);
    assert.ok(!existsSync(join(s.server.projectDir, "same.txt")), "the main checkout is untouched until a merge");

    const diff = await mergeCall(s, parent, { task_id: a!, action: "diff" });
    assert.match(diff.out, new RegExp(`^Diff of task ${a}'s branch ${wa.branch} against its base`));
    assert.match(diff.out, /\+A/);

    const first = await mergeCall(s, parent, { task_id: a!, action: "merge" }, "once");
    assert.equal(first.asked!.permission, "background_merge");
    assert.deepEqual(first.asked!.patterns, [`merge ${wa.branch}`]);
    assert.match(first.out, new RegExp(`^Merged ${wa.branch} into \\S+: 1 commit, 1 file changed, 1 insertion\\(\\+\\)\\. Removed its worktree and branch\\.$`));
    assert.equal(readFileSync(join(s.server.projectDir, "same.txt"), "utf8"), "A\n");
    assert.equal(git(s.server.projectDir, "status", "--porcelain"), "");
    assert.ok(!existsSync(wa.path) && !branchExists(s, wa.branch));
    assert.equal(worktreeOf(s, a!).removed?.by, "merge");

    const before = checkout(s);
    const second = await mergeCall(s, parent, { task_id: b!, action: "merge" });
    assert.match(second.out, /^Not merged: Merging \S+ into \S+ would conflict\. Nothing was changed\./);
    assert.equal((await pendingPermissions(s)).length, 0, "refused before the user is asked");
    assert.match(second.out, /Conflicting files:\n- same\.txt\n/);
    assert.deepEqual(checkout(s), before, "HEAD, status and the file are as they were");
    assert.ok(existsSync(wb.path) && branchExists(s, wb.branch), "the second's worktree and branch stay");

    const rejected = await mergeCall(s, parent, { task_id: b!, action: "discard" }, "reject");
    assert.match(rejected.out, new RegExp(`The user rejected the discard of ${wb.branch}; nothing was changed`));
    assert.ok(existsSync(wb.path) && branchExists(s, wb.branch));
    assert.equal(worktreeOf(s, b!).removed, undefined);

    const discarded = await mergeCall(s, parent, { task_id: b!, action: "discard" }, "once");
    assert.equal(discarded.out, `Discarded task ${b}'s branch ${wb.branch} (1 commit not merged, now gone) and removed its worktree.`);
    assert.ok(!existsSync(wb.path) && !branchExists(s, wb.branch));
    const listed = git(s.server.projectDir, "worktree", "list", "--porcelain");
    assert.ok(!listed.includes(wa.path) && !listed.includes(wb.path), "git knows neither worktree any more (a spare checkout may be listed)");
    assert.deepEqual(checkout(s), before);
  });

  it("refuses a task without a worktree with nothing asked", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: plain");
    await s.say(parent, call("background_task", { description: "plain child", prompt: "REPLY plain", agent: "general" }));
    const [id] = taskIdsIn((await toolOutputs(s, parent, "background_task")).at(-1)!);
    await waitUntil(() => row(s, id!)?.status === "completed", { timeoutMs: 30_000, what: "plain task completed" });
    await waitUntil(async () => (await s.notifications(parent)).length > 0, { timeoutMs: 20_000, what: "notice" });
    await idle(s, parent);
    const { out } = await mergeCall(s, parent, { task_id: id!, action: "merge" });
    assert.match(out, /has no worktree: it was not launched with isolation "worktree"/);
    assert.equal((await pendingPermissions(s)).length, 0);
  });

  it("a background child cannot merge or discard a sibling's branch: refused with nothing asked or changed", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: sibling");
    const [target] = await launchIsolated(s, parent, [{ description: "sibling work", prompt: write("sibling.txt", "mine\n") }]);
    const wt = worktreeOf(s, target!);
    const head = git(s.server.projectDir, "rev-parse", "HEAD");
    const prompt = [call("background_merge", { task_id: target, action: "discard" }), call("background_merge", { task_id: target, action: "merge" })].join("\n");
    // Isolated itself: its calls reach the plugin through the worktree's passive instance.
    await s.say(parent, call("background_task", { description: "unattended child", prompt, agent: "general", isolation: "worktree" }));
    const [child] = taskIdsIn((await toolOutputs(s, parent, "background_task")).at(-1)!);
    await waitUntil(() => row(s, child!)?.status === "completed", { timeoutMs: 30_000, what: "the child completed" });
    const outs = await toolOutputs(s, child!, "background_merge");
    assert.equal(outs.length, 2);
    // Outside its own tree a task reads as unknown: the answer names nothing of the user's.
    for (const out of outs) assert.match(out, new RegExp(`^background_merge: No background task or batch matches "${target}"\\.`));
    assert.equal((await pendingPermissions(s)).length, 0, "nothing asked");
    assert.ok(existsSync(wt.path) && branchExists(s, wt.branch), "the sibling's worktree and branch stay");
    assert.equal(git(s.server.projectDir, "rev-parse", "HEAD"), head);
    assert.equal(worktreeOf(s, target!).removed, undefined);
  });

  it("background_clear removes the worktrees; a branch with unmerged commits stays and the answer says so", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: clear");
    const [kept, empty] = await launchIsolated(s, parent, [
      { description: "keep this work", prompt: write("kept.txt", "kept\n") },
      { description: "change nothing", prompt: "REPLY nothing to do" },
    ]);
    const wk = worktreeOf(s, kept!);
    const we = worktreeOf(s, empty!);
    await s.say(parent, call("background_clear", {}));
    const out = (await toolOutputs(s, parent, "background_clear")).at(-1)!;
    assert.equal(out, [
      "Cleared 2 finished tasks.",
      "Removed 2 worktrees.",
      `Kept branch ${wk.branch} of task ${kept}: 1 commit not merged. background_merge merges or discards it.`,
    ].join("\n"));
    assert.ok(!existsSync(wk.path) && !existsSync(we.path));
    assert.ok(branchExists(s, wk.branch), "the branch with unmerged commits stays");
    assert.ok(!branchExists(s, we.branch), "the branch with nothing unmerged goes");
    assert.equal(git(s.server.projectDir, "show", `${wk.branch}:kept.txt`), "kept");
    assert.deepEqual(worktreeOf(s, kept!).removed && { by: worktreeOf(s, kept!).removed!.by, kept: worktreeOf(s, kept!).removed!.branchKept }, { by: "clear", kept: true });
    assert.ok(!existsSync(join(s.server.projectDir, "kept.txt")), "nothing reached the main checkout");
  });
});

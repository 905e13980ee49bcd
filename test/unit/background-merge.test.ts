import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { coreFixture, MODEL, PARENT } from "../helpers/core-fixture.ts";
import { gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";
import { createWorktree, nameBranch, settleWorktree } from "../../src/worktrees/worktrees.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import type { Task, TaskWorktree } from "../../src/core/task.ts";
import { DIFF_CAP_CHARS } from "../../src/tools/background-merge.ts";
import { removeExpiredWorktrees } from "../../src/plugin/worktree-retention.ts";
import { askForMergesByDefault } from "../../src/plugin/automation-permission.ts";

isolateGit();
const temp = tempDirs("background-merge-");
after(temp.cleanup);

type Asked = { permission: string; patterns: string[]; always: string[]; metadata: Record<string, unknown> };

/** A project repository with two files, tasks on a fake host, and the user's answer to each permission prompt. */
function project() {
  const dir = temp.make();
  const repo = join(dir, "repo");
  mkdirSync(repo);
  initRepo(repo, { "shared.txt": "base\n", "other.txt": "other\n" });
  const root = join(dir, "data", "worktrees", "p");
  const f = coreFixture();
  const asked: Asked[] = [];
  let answer: "once" | "reject" = "once";
  let rejectedPermission: string | undefined;
  let whileAsked: () => void = () => {};

  /** Calls a tool as the parent's model, with OpenCode's permission prompt answered by `answer`. */
  const call = async (name: string, args: unknown, sessionID = PARENT) => String(await f.tools[name]!.execute(args as never, {
    sessionID, messageID: `msg_${asked.length}_${Math.random()}`, agent: "build", abort: new AbortController().signal,
    extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
    ask: async (input: Asked) => {
      asked.push(input);
      whileAsked();
      if (answer === "reject" || input.permission === rejectedPermission) throw new Error("The user rejected permission to use this specific tool call.");
    },
  } as never));

  /** An isolated task whose child wrote `files` in its worktree; settled unless `running`. */
  async function isolated(description: string, files: Record<string, string>, opts: { running?: boolean; commit?: boolean; parent?: string } = {}) {
    const id = await f.launch({ description }, { sessionID: opts.parent ?? PARENT });
    let wt = await createWorktree({ repo, root, description, from: "head" });
    wt = await nameBranch(wt, id.slice(4, 16), description);
    for (const [path, content] of Object.entries(files)) writeFileSync(join(wt.path, path), content);
    if (opts.commit !== false && Object.keys(files).length) await settleWorktree(wt, description);
    f.store.save({ ...f.store.get(id)!, worktree: wt });
    if (!opts.running) {
      f.host.finishRun(id, "done");
      await f.flush();
    }
    return { id, wt };
  }

  const state = () => ({ head: gitSync(repo, ["rev-parse", "HEAD"]), status: gitSync(repo, ["status", "--porcelain"]), shared: readFileSync(join(repo, "shared.txt"), "utf8") });
  const branchExists = (branch: string) => gitSync(repo, ["branch", "--list", branch]) !== "";
  const recorded = (id: string) => f.store.get(id)!.worktree!;
  return { f, repo, root, asked, call, isolated, state, branchExists, recorded, reject: () => { answer = "reject"; }, rejectOnly: (permission: string) => { rejectedPermission = permission; }, allow: () => { answer = "once"; }, whileAsked: (act: () => void) => { whileAsked = act; } };
}

describe("background_merge", () => {
  it("merges the first of two children that wrote the same file, refuses the second with the file and changes nothing", async () => {
    const p = project();
    const one = await p.isolated("write one", { "shared.txt": "one\n" });
    const two = await p.isolated("write two", { "shared.txt": "two\n" });

    const merged = await p.call("background_merge", { task_id: one.id, action: "merge" });
    assert.match(merged, new RegExp(`^Merged ${one.wt.branch} into main: 1 commit, 1 file changed`));
    assert.match(merged, /Removed its worktree and branch\.$/);
    assert.equal(readFileSync(join(p.repo, "shared.txt"), "utf8"), "one\n");
    assert.equal(gitSync(p.repo, ["status", "--porcelain"]), "");
    assert.ok(!existsSync(one.wt.path), "worktree removed");
    assert.ok(!p.branchExists(one.wt.branch), "merged branch deleted");
    assert.equal(p.recorded(one.id).removed?.by, "merge");
    assert.match(await p.call("background_output", { task_id: one.id }), new RegExp(`^Task ${one.id} \\(branch ${one.wt.branch}, merged\\): write one\n`));
    assert.match(await p.call("background_list", {}), new RegExp(`${two.id} \\(branch ${two.wt.branch}\\) `), "a branch still there has no mark");
    assert.deepEqual(p.asked[0], {
      permission: "background_merge", patterns: [`merge ${one.wt.branch}`], always: ["merge *"],
      metadata: { title: `Merge branch ${one.wt.branch} of task ${one.id} "write one" into the current branch of ${p.repo}`, task: one.id, branch: one.wt.branch, action: "merge", files: ["shared.txt (+1 -1)"] },
    });
    assert.deepEqual({ ...p.asked[1], metadata: { ...p.asked[1]!.metadata, diff: "" } }, { permission: "edit", patterns: ["shared.txt"], always: ["*"], metadata: { filepath: "shared.txt", diff: "" } }, "then OpenCode's edit permission for the file it writes, as apply_patch asks");
    assert.match(String(p.asked[1]!.metadata.diff), /^diff --git a\/shared\.txt b\/shared\.txt\n[^]*\n-base\n\+one\n$/);

    const before = p.state();
    const refused = await p.call("background_merge", { task_id: two.id, action: "merge" });
    assert.match(refused, /^Not merged: Merging bg\/\S+ into main would conflict\. Nothing was changed\./);
    assert.match(refused, /Conflicting files:\n- shared\.txt\n/);
    assert.match(refused, /\nThe branch bg\/\S+ and its worktree stay \(action "diff" shows it, "discard" drops it\)\.$/);
    assert.equal(refused.match(/Nothing was changed/g)?.length, 1, "said once");
    assert.deepEqual(p.state(), before, "HEAD, status and the file are as they were");
    assert.ok(existsSync(two.wt.path) && p.branchExists(two.wt.branch), "the second's worktree and branch stay");
    assert.equal(p.recorded(two.id).removed, undefined);
    assert.equal(p.asked.length, 2, "a merge that would conflict is refused before the user is asked");

    const again = await p.call("background_merge", { task_id: one.id, action: "merge" });
    assert.match(again, /was merged, with its worktree; nothing is left to act on/);
    assert.equal(p.asked.length, 2, "no prompt for a task with nothing left");
  });

  it("a rejected prompt changes nothing, for merge and for discard", async () => {
    const p = project();
    const one = await p.isolated("rejected", { "new.txt": "x\n" });
    const before = p.state();
    p.reject();
    for (const action of ["merge", "discard"]) {
      const out = await p.call("background_merge", { task_id: one.id, action });
      assert.match(out, new RegExp(`^background_merge: The user rejected the ${action} of ${one.wt.branch}; nothing was changed\\.`));
    }
    assert.deepEqual(p.state(), before);
    assert.ok(existsSync(one.wt.path) && p.branchExists(one.wt.branch));
    assert.equal(p.recorded(one.id).removed, undefined);
    assert.equal(p.asked.length, 2);
  });

  it("the merge's edit prompt names every file it writes with its diff; the user's edit answer decides: rejected, nothing merged", async () => {
    const p = project();
    const one = await p.isolated("two files", { "new.txt": "fresh\nlines\n", "other.txt": "changed\n" });
    const before = p.state();
    p.rejectOnly("edit");
    const out = await p.call("background_merge", { task_id: one.id, action: "merge" });
    assert.match(out, new RegExp(`^background_merge: The user rejected the merge of ${one.wt.branch}; nothing was changed\\.`));
    const edit = p.asked.find((a) => a.permission === "edit")!;
    assert.deepEqual(edit.patterns, ["new.txt", "other.txt"]);
    assert.equal(edit.metadata.filepath, "new.txt, other.txt");
    assert.match(String(edit.metadata.diff), /\n\+fresh\n\+lines\n[^]*\n-other\n\+changed\n/);
    assert.deepEqual(p.asked[0]!.metadata.files, ["new.txt (+2 -0)", "other.txt (+1 -1)"]);
    assert.deepEqual(p.state(), before, "HEAD, status and files as they were");
    assert.ok(existsSync(one.wt.path) && p.branchExists(one.wt.branch));
    assert.equal(p.recorded(one.id).removed, undefined);
  });

  it("discard removes the worktree and the branch, commits and all, and the task records it", async () => {
    const p = project();
    const one = await p.isolated("throw away", { "junk.txt": "junk\n" });
    const before = p.state();
    const out = await p.call("background_merge", { task_id: one.id, action: "discard" });
    assert.equal(out, `Discarded task ${one.id}'s branch ${one.wt.branch} (1 commit not merged, now gone) and removed its worktree.`);
    assert.ok(!existsSync(one.wt.path));
    assert.ok(!p.branchExists(one.wt.branch));
    assert.equal(gitSync(p.repo, ["worktree", "list"]).split("\n").length, 1, "git knows no worktree but the checkout");
    assert.deepEqual(p.state(), before, "the checkout is untouched");
    assert.equal(p.recorded(one.id).removed?.by, "discard");
    assert.equal(p.asked[0]!.metadata.title, `Discard branch ${one.wt.branch} of task ${one.id} "throw away" and its worktree`);
    assert.match(await p.call("background_merge", { task_id: one.id, action: "diff" }), /was discarded, with its worktree/);
    const resumed = await p.call("background_task", { description: "again", prompt: "more", agent: "general", resume: one.id });
    assert.match(resumed, /worktree was removed \(by discard\), so it cannot be resumed/);
  });

  it("diff shows the branch's changes, capped with the command that shows the rest", async () => {
    const p = project();
    const small = await p.isolated("small change", { "shared.txt": "changed\n" });
    const out = await p.call("background_merge", { task_id: small.id, action: "diff" });
    assert.match(out, new RegExp(`^Diff of task ${small.id}'s branch ${small.wt.branch} against its base ${small.wt.base.slice(0, 7)}:\n`));
    assert.match(out, /-base\n\+changed/);
    assert.doesNotMatch(out, /cut at/);

    const big = await p.isolated("big change", { "big.txt": Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n") });
    const capped = await p.call("background_merge", { task_id: big.id, action: "diff" });
    assert.ok(capped.length < DIFF_CAP_CHARS + 400, `capped: ${capped.length}`);
    assert.match(capped, new RegExp(`\\(cut at ${DIFF_CAP_CHARS} characters; all of it: git -C \\S+ diff ${big.wt.base}\\)$`));

    const none = await p.isolated("no change", {});
    assert.match(await p.call("background_merge", { task_id: none.id, action: "diff" }), /has no changes against its base/);
    assert.equal(p.asked.length, 0, "diff asks nothing");
  });

  it("refuses with nothing changed: unknown id, a batch, no worktree, a nested task, still running, uncommitted changes to the same file", async () => {
    const p = project();
    assert.match(await p.call("background_merge", { task_id: "ses_nope", action: "merge" }), /No background task or batch matches "ses_nope"/);
    const plain = await p.f.launch({ description: "plain" }, { messageID: "msg_batch" });
    await p.f.launch({ description: "plain too" }, { messageID: "msg_batch" });
    assert.match(await p.call("background_merge", { task_id: "msg_batch", action: "merge" }), /"msg_batch" names a batch; pass one task id\./);
    assert.match(await p.call("background_merge", { task_id: plain, action: "merge" }), /has no worktree: it was not launched with isolation "worktree"/);

    const running = await p.isolated("still busy", { "shared.txt": "busy\n" }, { running: true });
    const before = p.state();
    for (const action of ["merge", "discard", "diff"]) {
      assert.match(await p.call("background_merge", { task_id: running.id, action }), new RegExp(`is still running\\. Wait for its result \\(background_output\\) or cancel it \\(background_cancel\\), then ${action} again\\. Nothing was changed\\.`));
    }
    p.f.host.finishRun(running.id, "done");
    await p.f.flush();
    // Its child answered, then a task it launched goes on working in the same worktree.
    const nested = await p.f.launch({ description: "nested" }, { sessionID: running.id });
    assert.match(await p.call("background_merge", { task_id: nested, action: "diff" }), new RegExp(`works in the worktree of task ${running.id}, which launched it: use task_id "${running.id}"`));
    assert.match(await p.call("background_merge", { task_id: running.id, action: "discard" }), new RegExp(`Task ${nested}, launched by task ${running.id}, still works in its worktree`));
    assert.deepEqual(p.state(), before);
    assert.ok(existsSync(running.wt.path) && p.branchExists(running.wt.branch));
    assert.equal(p.asked.length, 0, "no prompt for a refused call");

    const other = await p.isolated("edit shared", { "shared.txt": "mine\n" });
    writeFileSync(join(p.repo, "shared.txt"), "the user's own edit\n");
    const dirty = await p.call("background_merge", { task_id: other.id, action: "merge" });
    assert.match(dirty, /uncommitted changes to files bg\/\S+ changes\. Commit or stash them, then merge again\. Nothing was changed\.\n/);
    assert.match(dirty, /- shared\.txt/);
    assert.equal(readFileSync(join(p.repo, "shared.txt"), "utf8"), "the user's own edit\n");
    assert.ok(existsSync(other.wt.path) && p.branchExists(other.wt.branch));
    assert.equal(p.asked.length, 0, "uncommitted changes in the way: refused before asking");
  });

  it("checks again after the prompt: a checkout changed while the user decided is refused with nothing changed", async () => {
    const p = project();
    const one = await p.isolated("edit shared", { "shared.txt": "one\n" });
    p.whileAsked(() => writeFileSync(join(p.repo, "shared.txt"), "edited while asked\n"));
    const out = await p.call("background_merge", { task_id: one.id, action: "merge" });
    assert.equal(p.asked.length, 2, "it could land when asked (background_merge, then edit)");
    assert.match(out, /^Not merged: The main checkout has uncommitted changes to files bg\/\S+ changes\./);
    assert.equal(readFileSync(join(p.repo, "shared.txt"), "utf8"), "edited while asked\n");
    assert.ok(existsSync(one.wt.path) && p.branchExists(one.wt.branch));
    assert.equal(p.recorded(one.id).removed, undefined);
  });

  it("a background child may act only on tasks it launched: a sibling's branch is refused with nothing asked or changed", async () => {
    const p = project();
    const sibling = await p.isolated("sibling work", { "shared.txt": "sibling\n" });
    const child = await p.f.launch({ description: "unattended child" });
    const before = p.state();
    for (const action of ["merge", "discard", "diff"]) {
      const out = await p.call("background_merge", { task_id: sibling.id, action }, child);
      assert.equal(out, `background_merge: No background task or batch matches "${sibling.id}". Call background_list to see this session's task ids.`, "as an unknown id: a child learns nothing of tasks outside its tree");
    }
    assert.deepEqual(p.state(), before);
    assert.ok(existsSync(sibling.wt.path) && p.branchExists(sibling.wt.branch));
    assert.equal(p.asked.length, 0);

    const own = await p.isolated("its own", { "own.txt": "own\n" }, { parent: child });
    assert.match(await p.call("background_merge", { task_id: own.id, action: "discard" }, child), /^Discarded task/);
    assert.equal(p.asked.length, 1, "its own task's discard is asked like any other");
  });

  it("background_clear removes worktrees; a branch with unmerged commits stays, the answer says so, and it can still be merged", async () => {
    const p = project();
    const kept = await p.isolated("keep me", { "kept.txt": "kept\n" });
    const empty = await p.isolated("nothing done", {});
    const out = await p.call("background_clear", {});
    assert.equal(out, [
      "Cleared 2 finished tasks.",
      "Removed 2 worktrees.",
      `Kept branch ${kept.wt.branch} of task ${kept.id}: 1 commit not merged. background_merge merges or discards it.`,
    ].join("\n"));
    assert.ok(!existsSync(kept.wt.path) && !existsSync(empty.wt.path), "both directories gone");
    assert.ok(p.branchExists(kept.wt.branch), "the unmerged branch stays");
    assert.ok(!p.branchExists(empty.wt.branch), "a branch with nothing unmerged goes");
    assert.deepEqual(p.recorded(kept.id).removed, { at: p.f.clock.now(), by: "clear", branchKept: true });
    assert.match(await p.call("background_output", { task_id: kept.id }), new RegExp(`\\(branch ${kept.wt.branch}, worktree removed, branch kept\\)`));
    assert.match(await p.call("background_output", { task_id: empty.id }), new RegExp(`\\(branch ${empty.wt.branch}, removed\\)[\\s\\S]*in worktree \\S+ \\(removed\\)`));
    assert.match(await p.call("background_merge", { task_id: empty.id, action: "merge" }), /removed when the task was cleared, with its worktree; nothing is left/);

    assert.match(await p.call("background_merge", { task_id: kept.id, action: "diff" }), /\+kept/);
    assert.match(await p.call("background_merge", { task_id: kept.id, action: "merge" }), /^Merged bg\/\S+ into main: 1 commit/);
    assert.equal(readFileSync(join(p.repo, "kept.txt"), "utf8"), "kept\n");
    assert.ok(!p.branchExists(kept.wt.branch));
    assert.equal(p.recorded(kept.id).removed?.by, "merge");
  });

  it("background_clear keeps the worktree a task launched by the cleared one still works in", async () => {
    const p = project();
    const parent = await p.isolated("parent", { "a.txt": "a\n" });
    await p.f.launch({ description: "nested" }, { sessionID: parent.id });
    const out = await p.call("background_clear", {});
    assert.match(out, new RegExp(`Kept the worktree of task ${parent.id}: a task it launched still works in it\\.`));
    assert.ok(existsSync(parent.wt.path));
    assert.equal(p.recorded(parent.id).removed, undefined);
  });
});

describe("worktrees and retention", () => {
  it("removes the worktrees of expired tasks; a branch with unmerged commits stays and is logged; recent ones are untouched", async () => {
    const dir = temp.make();
    const repo = join(dir, "repo");
    mkdirSync(repo);
    initRepo(repo, { "f.txt": "f\n" });
    const root = join(dir, "wt");
    const store = new MemoryTaskStore();
    const make = async (id: string, settledAt: number, files: Record<string, string>) => {
      const wt = await createWorktree({ repo, root, description: id, from: "head" });
      for (const [path, content] of Object.entries(files)) writeFileSync(join(wt.path, path), content);
      store.save(task(id, settledAt, wt));
      return wt;
    };
    const unmerged = await make("ses_old1", 100, { "new.txt": "new\n" }); // uncommitted: removing commits it first
    const clean = await make("ses_old2", 100, {});
    const recent = await make("ses_new", 5000, { "x.txt": "x\n" });
    const logs: string[] = [];
    await removeExpiredWorktrees(store, 1000, (level, message) => logs.push(`${level}: ${message}`));
    assert.ok(!existsSync(unmerged.path) && !existsSync(clean.path));
    assert.ok(existsSync(recent.path), "a task within retention keeps its worktree");
    assert.equal(gitSync(repo, ["branch", "--list", unmerged.branch]).trim().replace(/^\* /, ""), unmerged.branch);
    assert.equal(gitSync(repo, ["show", `${unmerged.branch}:new.txt`]), "new", "the uncommitted work was kept on the branch");
    assert.equal(gitSync(repo, ["branch", "--list", clean.branch]), "");
    assert.deepEqual(logs, [`info: Retention removed the worktree of task ses_old1 but kept its branch ${unmerged.branch} in ${repo}: 1 commit(s) not merged. Merge or delete it; \`opencode-errands worktrees\` lists it.`]);
  });

  it("the config hook makes OpenCode ask for background_merge unless the user decided", () => {
    const empty: { permission?: unknown } = {};
    askForMergesByDefault(empty);
    assert.deepEqual(empty.permission, { background_merge: "ask" });
    const decided = { permission: { background_merge: "allow" } };
    askForMergesByDefault(decided);
    assert.deepEqual(decided.permission, { background_merge: "allow" });
    const everything = { permission: "allow" };
    askForMergesByDefault(everything);
    assert.equal(everything.permission, "allow");
  });
});

function task(id: string, settledAt: number, worktree: TaskWorktree): Task {
  return {
    id, parentSessionID: PARENT, parentMessageID: "msg_1", parentAgent: "build", batchId: "msg_1", description: id, prompt: "p", agent: "general",
    model: MODEL, status: "completed", createdAt: 0, settledAt, resumeCount: 0, isForked: false, promptedAt: 0,
    progress: { toolCalls: 0, lastTools: [], lastActivityAt: 0 }, worktree,
  } as Task;
}


import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import { routePage } from "../../src/dashboard/dashboard-routes.ts";
import { runningTask } from "../store/task-fixtures.ts";

/** A parent task A whose child launched a grandchild G (from A's session), both running. */
async function nested() {
  const f = coreFixture();
  const a = await f.launch({ description: "child A" });
  const g = await f.launch({ description: "grandchild G", prompt: "help A" }, { sessionID: a });
  return { f, a, g };
}

describe("nested tasks: the settle rule", () => {
  it("an idle child with a task of its own still running waits; its answer after the last one settles it", async () => {
    const { f, a, g } = await nested();
    f.host.finishRun(a, "Launched a helper; waiting for its result");
    await f.flush();
    assert.equal(f.store.get(a)?.status, "running", "an interim answer does not settle the task");
    const list = await f.call("background_list", {});
    assert.match(list, new RegExp(`waiting for 1 background task of its own \\(${g}\\)`));
    assert.match(list, new RegExp(`\\n  └ .*${g}`), "the grandchild stands under its task");
    const out = await f.call("background_output", { task_id: a });
    assert.match(out, /waiting for 1 background task of its own/);
    assert.equal(f.host.promptsTo(PARENT).length, 0, "the parent is told nothing yet");

    f.host.finishRun(g, "the helper's finding");
    await f.flush();
    assert.equal(f.store.get(g)?.status, "completed");
    assert.equal(f.host.promptsTo(a).filter((p) => p.text.includes("the helper's finding")).length, 1, "the child hears its grandchild");
    assert.equal(f.store.get(a)?.status, "running", "still running until the child answers after the news");

    f.host.finishRun(a, "Final: the helper found it");
    await f.flush();
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const done = f.store.get(a);
    assert.equal(done?.status, "completed");
    assert.equal(done?.result, "Final: the helper found it");
    const told = f.host.promptsTo(PARENT).map((p) => p.text).join("\n");
    assert.match(told, /Final: the helper found it/);
    assert.doesNotMatch(told, /waiting for its result/, "never the interim answer");
  });

  it("a child told of a failed task of its own decides: its answer is the result", async () => {
    const f = coreFixture();
    const a = await f.launch({ description: "child A" });
    const g1 = await f.launch({ description: "g1" }, { sessionID: a, messageID: "msg_a1" });
    const g2 = await f.launch({ description: "g2" }, { sessionID: a, messageID: "msg_a1" });
    f.host.finishRun(a, "waiting for both");
    await f.flush();
    assert.match(await f.call("background_output", { task_id: a }), new RegExp(`waiting for 2 background tasks of its own \\(${g1}, ${g2}\\)|waiting for 2 background tasks of its own \\(${g2}, ${g1}\\)`));
    f.host.finishRun(g1, "one found", { error: "the model failed" });
    f.host.finishRun(g2, "two found");
    await f.flush();
    const heard = f.host.promptsTo(a).map((p) => p.text).join("\n");
    assert.match(heard, new RegExp(g1));
    assert.match(heard, new RegExp(g2));
    assert.equal(f.store.get(a)?.status, "running");
    f.host.finishRun(a, "one failed, the other found two");
    await f.flush();
    assert.equal(f.store.get(a)?.result, "one failed, the other found two");
  });
});

describe("nested tasks: cancel cascades", () => {
  it("cancelling a task cancels its own tasks first and the notice lists them", async () => {
    const { f, a, g } = await nested();
    const out = await f.call("background_cancel", { task_id: a });
    await f.flush();
    assert.equal(f.store.get(g)?.status, "cancelled");
    assert.equal(f.store.get(a)?.status, "cancelled");
    assert.deepEqual(f.host.aborted, [g, a], "deepest first");
    assert.match(f.store.get(a)?.error ?? "", new RegExp(`cancelled too: ${g}`));
    assert.match(out, new RegExp(`${a}: cancelled, and its own background tasks first: ${g}`));
    assert.equal(f.host.promptsTo(a).length, 1, "the cancelled child is told nothing of its cancelled task (only its first prompt)");
  });

  it("a child settled as error takes its running tasks with it", async () => {
    const { f, a, g } = await nested();
    f.host.finishRun(a, "", { error: "provider down" });
    await f.flush();
    assert.equal(f.store.get(a)?.status, "error");
    assert.equal(f.store.get(g)?.status, "cancelled");
    assert.deepEqual(f.host.aborted, [g]);
  });
});

describe("nested tasks: answered again", () => {
  it("a settled child woken again gives the parent one follow-up with its new answer", async () => {
    const f = coreFixture();
    const a = await f.launch({ description: "child A" });
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(a, "first answer");
    await f.flush();
    assert.equal(f.store.get(a)?.status, "completed");
    const before = f.host.promptsTo(PARENT).length;
    await f.clock.advance(1000);
    await f.host.prompt({ sessionID: a, text: "a late notice", agent: "general" });
    await f.clock.advance(1000);
    f.host.finishRun(a, "second answer");
    await f.flush();
    f.host.emit({ type: "idle", sessionID: a });
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const after = f.host.promptsTo(PARENT).slice(before);
    assert.equal(after.length, 1, "exactly one follow-up");
    assert.match(after[0].text, /second answer/);
    assert.match(after[0].visible ?? "", new RegExp(`${a} answered again`));
    assert.equal(f.store.get(a)?.result, "second answer");
  });
});

describe("nested tasks: the dashboard's task page", () => {
  it("shows the tasks a task's child launched, and theirs, each with a link; a grandchild links back", () => {
    const dir = mkdtempSync(join(tmpdir(), "nested-page-"));
    try {
      const path = join(dir, "tasks.db");
      const store = SqliteTaskStore.open({ path, projectId: "proj" });
      store.save(runningTask("ses_child", { description: "child A" }));
      store.save(runningTask("ses_grand", { description: "grandchild G", parentSessionID: "ses_child" }));
      store.save(runningTask("ses_great", { description: "great-grandchild", parentSessionID: "ses_grand", status: "completed", result: "ok" }));
      store.close();
      const reader = ReadModel.open(path);
      try {
        const page = (id: string) => routePage(reader, new URL(`/task?project=proj&id=${id}`, "http://127.0.0.1"), Date.now()).body;
        const child = page("ses_child");
        const tree = child.slice(child.indexOf('id="task-tree"'));
        assert.match(tree, /data-depth="1">└ <a href="[^"]*id=ses_grand"[^>]*>ses_grand<\/a>/);
        assert.match(tree, /data-depth="2">└ <a href="[^"]*id=ses_great"[^>]*>ses_great<\/a>/);
        assert.match(page("ses_grand"), /launched by <a href="[^"]*id=ses_child">task “child A”<\/a>/);
        assert.doesNotMatch(page("ses_great"), /id="task-tree"/, "a task without tasks of its own shows no tree");
      } finally {
        reader.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

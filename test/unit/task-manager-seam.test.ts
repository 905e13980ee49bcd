import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { coreFixture, PARENT, MODEL } from "../helpers/core-fixture.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import type { Task } from "../../src/core/task.ts";
import { withMarker } from "../../src/core/notification-text.ts";

const launchInput = (overrides: Record<string, unknown> = {}) => ({
  parentSessionID: PARENT, parentMessageID: "auto_a1_1", parentAgent: "build", parentModel: MODEL,
  description: "scheduled check", prompt: "check", agent: "general", ...overrides,
});

describe("the seam for layers above the core", () => {
  it("launch takes a model that overrides the agent's own and the parent's", async () => {
    const f = coreFixture();
    const other = { providerID: "p2", modelID: "m2" };
    const task = await f.manager.launch(launchInput({ agent: "explore", model: other }));
    assert.deepEqual(task.model, other);
    assert.deepEqual(f.host.promptsTo(task.id)[0].model, other);
    assert.equal(task.batchId, "auto_a1_1");
  });

  it("notify: false settles without any parent notification, and the flag survives the store", async () => {
    for (const store of [undefined, "sqlite"] as const) {
      const dir = mkdtempSync(join(tmpdir(), "seam-"));
      try {
        const f = coreFixture({}, store ? SqliteTaskStore.open({ path: join(dir, "t.db"), projectId: "p" }) : undefined);
        const task = await f.manager.launch(launchInput({ notify: false }));
        assert.equal(f.store.get(task.id)!.notify, false);
        f.host.setActivity(PARENT, "idle");
        f.host.finishRun(task.id, "quiet result");
        await f.flush();
        assert.equal(f.store.get(task.id)!.status, "completed");
        assert.equal(f.store.pendingNotifications().length, 0);
        assert.equal(f.host.promptsTo(PARENT).length, 0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it("onSettle runs inside the settle's transaction with the saved task; its writes commit with it", async () => {
    const f = coreFixture();
    const seen: { status: string; inStore: string | undefined }[] = [];
    f.manager.onSettle((task) => {
      seen.push({ status: task.status, inStore: f.store.get(task.id)?.status });
      f.manager.enqueueNotification({ id: `n:${task.id}`, parentSessionID: PARENT, taskId: task.id, text: `run says ${task.result}`, wake: true });
    });
    const task = await f.manager.launch(launchInput({ notify: false }));
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(task.id, "42");
    await f.flush();
    assert.deepEqual(seen, [{ status: "completed", inStore: "completed" }]);
    const told = f.host.promptsTo(PARENT);
    assert.equal(told.length, 1);
    assert.equal(told[0].text, withMarker("run says 42", `n:${task.id}`), "the text, marked with its id by the notifier");
    assert.equal(told[0].noReply, false);
    assert.equal(told[0].agent, "build");
    assert.deepEqual(told[0].model, MODEL);
  });

  it("a listener that throws is logged, leaves none of its writes, and the settle stands (SQLite: a savepoint)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "seam-"));
    const f = coreFixture({}, SqliteTaskStore.open({ path: join(dir, "t.db"), projectId: "p" }));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const later: Task[] = [];
    f.manager.onSettle((task) => {
      f.manager.enqueueNotification({ id: "half", parentSessionID: PARENT, taskId: task.id, text: "half", wake: false });
      throw new Error("listener broke");
    });
    f.manager.onSettle((task) => later.push(task));
    const task = await f.manager.launch(launchInput({ notify: false }));
    f.host.finishRun(task.id, "done");
    await f.flush();
    assert.equal(f.store.get(task.id)!.status, "completed");
    assert.equal(later.length, 1, "later listeners still run");
    assert.equal(f.store.pendingNotifications().length, 0, "the throwing listener's write was rolled back");
    assert.ok(f.host.logs.some((l) => l.level === "error" && /settle listener failed/.test(l.message)));
  });

  it("enqueueNotification outside a settle is delivered once the parent is idle", async () => {
    const f = coreFixture();
    const task = await f.manager.launch(launchInput({ notify: false }));
    f.manager.enqueueNotification({ id: "paused", parentSessionID: PARENT, taskId: task.id, text: "automation paused", wake: true });
    await f.flush();
    assert.equal(f.host.promptsTo(PARENT).length, 0, "held while the parent is busy");
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    assert.deepEqual(f.host.promptsTo(PARENT).map((p) => p.text), [withMarker("automation paused", "paused")]);
  });
});

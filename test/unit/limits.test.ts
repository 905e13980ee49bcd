import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";

describe("concurrency limits and the queue", () => {
  it("runs at most maxConcurrentPerModel per model; the rest wait as queued, in order", async () => {
    const f = coreFixture({ maxConcurrentPerModel: 2, maxConcurrentTotal: 10 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await f.launch({ description: `job ${i}` }));
    assert.deepEqual(ids.map((id) => f.store.get(id)!.status), ["running", "running", "queued", "queued", "queued"]);
    assert.equal(f.host.prompts.filter((p) => ids.includes(p.sessionID)).length, 2);
    assert.match(await f.call("background_list", { status: "queued" }), /job 2[\s\S]*job 3[\s\S]*job 4/);
    f.host.finishRun(ids[1], "done 1");
    await f.flush();
    assert.equal(f.store.get(ids[2])!.status, "running", "the freed slot goes to the next in line");
    assert.equal(f.store.get(ids[3])!.status, "queued");
  });

  it("a full model does not hold up another model's task; the total limit holds for all", async () => {
    const f = coreFixture({ maxConcurrentPerModel: 1, maxConcurrentTotal: 2 });
    const a = await f.launch({ agent: "general" });
    const b = await f.launch({ agent: "general" });
    const c = await f.launch({ agent: "explore" });
    const d = await f.launch({ agent: "explore" });
    assert.deepEqual([a, b, c, d].map((id) => f.store.get(id)!.status), ["running", "queued", "running", "queued"]);
  });

  it("a queued task can be cancelled and never calls the model", async () => {
    const f = coreFixture({ maxConcurrentPerModel: 1 });
    await f.launch();
    const queued = await f.launch();
    assert.match(await f.call("background_cancel", { task_id: queued }), /cancelled/);
    assert.equal(f.store.get(queued)!.status, "cancelled");
    assert.equal(f.host.promptsTo(queued).length, 0);
    assert.equal(f.host.aborted.length, 0);
  });

  it("queued tasks survive a restart and start when the new instance starts", async () => {
    const f = coreFixture({ maxConcurrentPerModel: 1 });
    const running = await f.launch();
    const queued = await f.launch();
    f.host.finishRun(running, "ok", { emitIdle: false });
    f.manager.dispose(); // the old instance stopped: the new one takes over what it drove
    const { TaskManager } = await import("../../src/core/task-manager.ts");
    const { DEFAULT_OPTIONS } = await import("../../src/options/options.ts");
    const second = new TaskManager(f.host, f.store, f.clock, { ...DEFAULT_OPTIONS, maxConcurrentPerModel: 1 });
    await second.start();
    assert.equal(f.store.get(running)!.status, "completed");
    assert.equal(f.store.get(queued)!.status, "running");
    second.dispose();
  });
});

describe("depth", () => {
  it("refuses a launch deeper than maxDepth and says why", async () => {
    const f = coreFixture({ maxDepth: 2 });
    const child = await f.launch();
    f.host.addSession(child);
    const grandchild = await f.launch({}, { sessionID: child });
    f.host.addSession(grandchild);
    const out = await f.call("background_task", { description: "d", prompt: "p", agent: "general" }, { sessionID: grandchild });
    assert.match(out, /limit is 2 \(maxDepth\)/);
    assert.equal(f.store.list({ parentSessionID: grandchild }).length, 0);
  });
});

describe("time limit and faults", () => {
  it("aborts a task that runs past maxRunSeconds and settles it as timed out", async () => {
    const f = coreFixture({ maxRunSeconds: 60, pollIntervalMs: 1000 });
    const id = await f.launch();
    await f.clock.advance(59_000);
    assert.equal(f.store.get(id)!.status, "running");
    await f.clock.advance(2_000);
    assert.equal(f.store.get(id)!.status, "error");
    assert.match(f.store.get(id)!.error!, /Timed out after 1m 00s/);
    assert.deepEqual(f.host.aborted, [id]);
  });

  it("fails a stuck task only after checking the session for recent activity", async () => {
    const f = coreFixture({ staleAfterMinutes: 1, maxRunSeconds: 3600, pollIntervalMs: 10_000 });
    const id = await f.launch();
    await f.clock.advance(50_000);
    f.host.sessions.get(id)!.messages.push({ id: "m", role: "assistant", createdAt: f.clock.now(), toolCallsPending: true, text: "" });
    await f.clock.advance(20_000);
    assert.equal(f.store.get(id)!.status, "running", "recent activity in the session keeps it alive");
    await f.clock.advance(70_000);
    assert.equal(f.store.get(id)!.status, "error");
    assert.match(f.store.get(id)!.error!, /No activity for 1 minute/);
  });

  it("shows OpenCode's retries in the progress", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.emit({ type: "status", sessionID: id, status: "retry", retry: { attempt: 2, message: "overloaded", nextAt: f.clock.now() + 4000 } });
    assert.match(await f.call("background_output", { task_id: id }), /retry attempt 2 in 4s: overloaded/);
    f.host.emit({ type: "status", sessionID: id, status: "busy" });
    assert.doesNotMatch(await f.call("background_output", { task_id: id }), /retry/);
  });

  it("surfaces a child's permission request to the parent: toast, output and list", async () => {
    const f = coreFixture();
    const id = await f.launch({ description: "needs bash" });
    f.host.emit({ type: "permission", sessionID: id, title: "bash (rm -rf build)" });
    assert.equal(f.host.toasts.at(-1), `"needs bash" (${id}) is waiting for: bash (rm -rf build)`);
    assert.match(await f.call("background_output", { task_id: id }), /WAITING FOR PERMISSION: bash \(rm -rf build\)/);
    assert.match(await f.call("background_list", {}), /WAITING FOR PERMISSION/);
    f.host.emit({ type: "permission-replied", sessionID: id });
    assert.doesNotMatch(await f.call("background_list", {}), /WAITING FOR PERMISSION/);
  });
});

describe("parent abort", () => {
  it("leaves children running by default", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.emit({ type: "error", sessionID: PARENT, name: "MessageAbortedError", message: "Aborted" });
    await f.flush();
    assert.equal(f.store.get(id)!.status, "running");
  });

  it("cancels running and queued children with cancelChildrenOnParentAbort", async () => {
    const f = coreFixture({ cancelChildrenOnParentAbort: true, maxConcurrentPerModel: 1 });
    const running = await f.launch();
    const queued = await f.launch();
    f.host.emit({ type: "error", sessionID: PARENT, name: "MessageAbortedError", message: "Aborted" });
    await f.flush();
    assert.equal(f.store.get(running)!.status, "cancelled");
    assert.equal(f.store.get(queued)!.status, "cancelled");
    assert.equal(f.host.promptsTo(queued).length, 0, "the queued one never started");
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT, MODEL } from "../helpers/core-fixture.ts";

describe("launch", () => {
  it("creates a titled child of the caller and prompts it with the agent and an explicit model", async () => {
    const f = coreFixture();
    const id = await f.launch({ description: "scan repo", prompt: "list files" });
    const child = f.host.sessions.get(id)!;
    assert.equal(child.parentID, PARENT);
    assert.match(child.title, /scan repo/);
    assert.deepEqual(f.host.promptsTo(id), [{ sessionID: id, text: "list files", agent: "general", model: MODEL }]);
    assert.equal(f.store.get(id)!.status, "running");
    assert.equal(f.store.get(id)!.resumeCount, 0);
  });

  it("uses the agent's own model when it has one", async () => {
    const f = coreFixture();
    const id = await f.launch({ agent: "explore" });
    assert.deepEqual(f.host.promptsTo(id)[0].model, { providerID: "cheap", modelID: "small" });
  });

  it("refuses an unknown agent, naming the available ones, and creates nothing", async () => {
    const f = coreFixture();
    const out = await f.call("background_task", { description: "d", prompt: "p", agent: "nope" });
    assert.match(out, /Unknown agent "nope"\. Available agents: general, explore, build/);
    assert.equal(f.host.sessions.size, 1);
  });

  it("refuses fork together with resume before creating any session", async () => {
    const f = coreFixture();
    const out = await f.call("background_task", { description: "d", prompt: "p", agent: "general", fork: true, resume: "ses_x" });
    assert.match(out, /mutually exclusive/);
    assert.equal(f.host.sessions.size, 1);
    assert.equal(f.store.list().length, 0);
  });

  it("answers bad arguments with how to fix them", async () => {
    const f = coreFixture();
    const out = await f.call("background_task", { description: "", prompt: 3, agent: "general", bogus: 1 });
    assert.match(out, /invalid arguments/);
    assert.match(out, /"prompt"/);
    assert.match(out, /bogus/);
  });

  it("settles as error and says so when the child refuses the prompt", async () => {
    const f = coreFixture();
    f.host.failPrompt = true;
    const out = await f.call("background_task", { description: "d", prompt: "p", agent: "general" });
    assert.match(out, /did not start: .*prompt refused/);
    assert.equal(f.store.list()[0].status, "error");
  });
});

describe("completion", () => {
  it("completes on session.idle with the final assistant text and notifies the parent once", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(id, "found 3 things");
    f.host.emit({ type: "idle", sessionID: id });
    await f.flush();
    const task = f.store.get(id)!;
    assert.equal(task.status, "completed");
    assert.equal(task.result, "found 3 things");
    const notes = f.host.promptsTo(PARENT);
    assert.equal(notes.length, 1);
    assert.match(notes[0].text, /found 3 things/);
    assert.equal(notes[0].noReply, false);
    assert.equal(notes[0].agent, "build");
    assert.deepEqual(notes[0].model, MODEL);
  });

  it("settles from the answer seen in events, without reading the child's messages", async () => {
    const f = coreFixture();
    const id = await f.launch();
    const now = f.clock.now();
    f.host.messageCalls = 0;
    f.host.emit({ type: "message", sessionID: id, message: { id: "msg_a1", role: "assistant", createdAt: now, toolCallsPending: false } });
    f.host.emit({ type: "text", sessionID: id, messageID: "msg_a1", partID: "prt_1", text: "from events" });
    f.host.emit({ type: "message", sessionID: id, message: { id: "msg_a1", role: "assistant", createdAt: now, completedAt: now, toolCallsPending: false } });
    f.host.emit({ type: "idle", sessionID: id });
    await f.flush();
    assert.equal(f.store.get(id)!.result, "from events");
    assert.equal(f.host.messageCalls, 0);
  });

  it("asks the host when the events show an unfinished step", async () => {
    const f = coreFixture();
    const id = await f.launch();
    const now = f.clock.now();
    f.host.emit({ type: "message", sessionID: id, message: { id: "msg_a1", role: "assistant", createdAt: now, completedAt: now, toolCallsPending: true } });
    f.host.messageCalls = 0;
    f.host.finishRun(id, "from the host");
    await f.flush();
    assert.equal(f.host.messageCalls, 1);
    assert.equal(f.store.get(id)!.result, "from the host");
  });

  it("ignores an idle that comes before the child answered", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.emit({ type: "idle", sessionID: id });
    await f.flush();
    assert.equal(f.store.get(id)!.status, "running");
  });

  it("settles a task whose idle event was missed on the next poll, with one status call for all tasks", async () => {
    const f = coreFixture({ pollIntervalMs: 1000 });
    const a = await f.launch();
    const b = await f.launch();
    f.host.finishRun(a, "A", { emitIdle: false });
    f.host.finishRun(b, "B", { emitIdle: false });
    f.host.statusCalls = 0;
    await f.clock.advance(1000);
    assert.equal(f.host.statusCalls, 1);
    assert.equal(f.store.get(a)!.status, "completed");
    assert.equal(f.store.get(b)!.result, "B");
  });

  it("settles an error from session.error with the provider's message, and wakes the parent", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.emit({ type: "error", sessionID: id, name: "APIError", message: "rate limited by provider" });
    await f.flush();
    assert.equal(f.store.get(id)!.status, "error");
    assert.equal(f.store.get(id)!.error, "rate limited by provider");
    assert.equal(f.host.promptsTo(PARENT)[0].noReply, false);
  });

  it("settles a deleted child as error", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.emit({ type: "deleted", sessionID: id });
    await f.flush();
    assert.equal(f.store.get(id)!.status, "error");
    assert.match(f.store.get(id)!.error!, /deleted/);
  });

  it("never notifies twice for duplicate idle events", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(id, "done");
    f.host.emit({ type: "idle", sessionID: id });
    f.host.emit({ type: "idle", sessionID: id });
    await f.flush();
    await f.clock.advance(5000);
    assert.equal(f.host.promptsTo(PARENT).length, 1);
  });
});

describe("progress", () => {
  it("counts each tool call once and keeps the last tools, without reading history", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.messageCalls = 0;
    for (const [callID, tool] of [["c1", "read"], ["c1", "read"], ["c2", "grep"], ["c3", "bash"]]) {
      f.host.emit({ type: "tool", sessionID: id, callID, tool });
    }
    const out = await f.call("background_output", { task_id: id });
    assert.match(out, /3 tool calls, last: read, grep, bash/);
    assert.equal(f.host.messageCalls, 0);
  });
});

describe("recovery", () => {
  it("a run aborted while its task still counts as running (OpenCode disposed the instance) is told to continue", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.manager.dispose();
    await f.clock.advance(10);
    const now = f.clock.now();
    f.host.sessions.get(id)!.messages.push({ id: "msg_ab", role: "assistant", createdAt: now, completedAt: now, toolCallsPending: false, text: "", error: "Aborted", aborted: true });
    f.host.sessions.get(id)!.activity = "idle";
    const { TaskManager } = await import("../../src/core/task-manager.ts");
    const { DEFAULT_OPTIONS } = await import("../../src/options/options.ts");
    const reloaded = new TaskManager(f.host, f.store, f.clock, DEFAULT_OPTIONS);
    await reloaded.start();
    assert.equal(f.store.get(id)!.status, "running");
    assert.match(f.host.promptsTo(id).at(-1)!.text, /Continue where you left off/);
    reloaded.dispose();
  });
});

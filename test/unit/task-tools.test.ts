import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";

const OTHER = "ses_other0002";

describe("batches and parent notification", () => {
  it("adds intermediate results without a turn and wakes the parent on the last of the batch", async () => {
    const f = coreFixture();
    const ids = [await f.launch({}, { messageID: "msg_b1" }), await f.launch({}, { messageID: "msg_b1" }), await f.launch({}, { messageID: "msg_b1" })];
    assert.equal(new Set(ids.map((id) => f.store.get(id)!.batchId)).size, 1);
    f.host.setActivity(PARENT, "idle");
    for (const id of ids) {
      f.host.finishRun(id, `result ${id}`);
      await f.flush();
    }
    const notes = f.host.promptsTo(PARENT);
    assert.equal(notes.length, 3);
    assert.deepEqual(notes.map((n) => n.noReply), [true, true, false]);
    for (const id of ids) assert.equal(notes.filter((n) => n.text.includes(`result ${id}`)).length, 1);
  });

  it("holds notifications while the parent is busy and delivers them in one message when it goes idle", async () => {
    const f = coreFixture();
    const a = await f.launch({}, { messageID: "msg_x" });
    const b = await f.launch({}, { messageID: "msg_x" });
    f.host.finishRun(a, "AAA");
    f.host.finishRun(b, "BBB");
    await f.flush();
    assert.equal(f.host.promptsTo(PARENT).length, 0);
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const notes = f.host.promptsTo(PARENT);
    assert.equal(notes.length, 1);
    assert.match(notes[0].text, /AAA[\s\S]*BBB/);
    assert.equal(notes[0].noReply, false);
  });

  it("holds a notification when the host says the parent just got busy, before any event said so", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.setActivity(PARENT, "idle");
    await f.clock.advance(1000);
    f.host.setActivity(PARENT, "busy", false);
    f.host.finishRun(a, "done");
    await f.flush();
    assert.equal(f.host.promptsTo(PARENT).length, 0);
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    assert.equal(f.host.promptsTo(PARENT).length, 1);
  });

  it("delivers a held notification on the poll when the parent's idle event was missed", async () => {
    const f = coreFixture({ pollIntervalMs: 500 });
    const a = await f.launch();
    f.host.finishRun(a, "done");
    await f.flush();
    f.host.setActivity(PARENT, "idle", false);
    await f.clock.advance(500);
    assert.equal(f.host.promptsTo(PARENT).length, 1);
  });

  it("does not wake the parent for a result it already read with background_output", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "done");
    await f.flush();
    assert.match(await f.call("background_output", { task_id: a }), /Result:\ndone/);
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    assert.equal(f.host.promptsTo(PARENT)[0].noReply, true);
  });

  it("notifies with the agent and model the parent switched to after the launch", async () => {
    const f = coreFixture();
    const a = await f.launch();
    const switched = { providerID: "other", modelID: "bigger" };
    f.host.emit({ type: "message", sessionID: PARENT, message: { id: "msg_u9", role: "user", createdAt: f.clock.now(), toolCallsPending: false, agent: "plan", model: switched } });
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(a, "done");
    await f.flush();
    const [note] = f.host.promptsTo(PARENT);
    assert.equal(note.agent, "plan");
    assert.deepEqual(note.model, switched);
  });

  it("caps the result in the notification and points to background_output", async () => {
    const f = coreFixture({ resultCapChars: 200 });
    const a = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(a, "x".repeat(500));
    await f.flush();
    const text = f.host.promptsTo(PARENT)[0].text;
    assert.match(text, /300 more characters: call background_output/);
    assert.ok(!text.includes("x".repeat(201)));
  });
});

describe("background_output", () => {
  it("is non-blocking by default and shows status and progress", async () => {
    const f = coreFixture();
    const a = await f.launch({ description: "count lines" });
    const out = await f.call("background_output", { task_id: a });
    assert.match(out, /count lines/);
    assert.match(out, /Status: running/);
  });

  it("with block waits until the task settles", async () => {
    const f = coreFixture();
    const a = await f.launch();
    const pending = f.call("background_output", { task_id: a, block: true, timeout: 60 });
    await f.clock.advance(10_000);
    f.host.finishRun(a, "late answer");
    const out = await pending;
    assert.match(out, /Status: completed/);
    assert.match(out, /late answer/);
    assert.equal(f.manager.debugCounts().waiters, 0);
  });

  it("with block says plainly when it timed out, using the default timeout", async () => {
    const f = coreFixture({ defaultBlockTimeoutSeconds: 30 });
    const a = await f.launch();
    const pending = f.call("background_output", { task_id: a, block: true });
    await f.clock.advance(29_000);
    let done = false;
    void pending.then(() => (done = true));
    await f.flush();
    assert.equal(done, false);
    await f.clock.advance(1_000);
    assert.match(await pending, /Timed out after waiting 30s/);
    // The wait's own timer is gone; the one left is the poll timer, as the task still runs.
    assert.equal(f.manager.debugCounts().waiters, 0);
    assert.equal(f.manager.debugCounts().pollTimer, 1);
    assert.equal(f.clock.pendingTimers(), 1);
  });

  it("with block resolves at once when already settled", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "done");
    await f.flush();
    assert.match(await f.call("background_output", { task_id: a, block: true }), /Status: completed/);
  });

  it("stops waiting when the calling turn is aborted", async () => {
    const f = coreFixture();
    const a = await f.launch();
    const abort = new AbortController();
    const pending = f.call("background_output", { task_id: a, block: true }, { abort: abort.signal });
    abort.abort();
    assert.match(await pending, /this turn was aborted/);
  });

  it("refuses a timeout over the maximum", async () => {
    const f = coreFixture({ maxBlockTimeoutSeconds: 600 });
    const a = await f.launch();
    assert.match(await f.call("background_output", { task_id: a, block: true, timeout: 601 }), /invalid arguments.*timeout/);
  });

  it("records when a result was retrieved", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "done");
    await f.flush();
    assert.equal(f.store.get(a)!.retrievedAt, undefined);
    await f.call("background_output", { task_id: a });
    assert.equal(f.store.get(a)!.retrievedAt, f.clock.now());
  });

  it("accepts a batch id and reports every task of the batch", async () => {
    const f = coreFixture();
    await f.launch({ description: "one" }, { messageID: "msg_batch7" });
    await f.launch({ description: "two" }, { messageID: "msg_batch7" });
    const out = await f.call("background_output", { task_id: "msg_batch7" });
    assert.match(out, /Batch msg_batch7 \(2 tasks\)/);
    assert.match(out, /one[\s\S]*two/);
  });
});

describe("ids", () => {
  it("accepts any unique prefix, with or without ses_, and lists candidates for an ambiguous one", async () => {
    const f = coreFixture();
    const a = await f.launch();
    await f.launch();
    assert.match(await f.call("background_output", { task_id: a.slice(4, 10) }), /Status: running/);
    assert.match(await f.call("background_output", { task_id: a }), /Status: running/);
    assert.match(await f.call("background_output", { task_id: "ses_000" }), /matches more than one/);
    assert.match(await f.call("background_output", { task_id: "zzz" }), /No background task or batch matches "zzz"/);
  });

  it("prints the full id that launch returned everywhere, however many tasks share a prefix", async () => {
    const f = coreFixture();
    const a = await f.launch({ description: "first" }, { messageID: "msg_ids" });
    const launched = await f.call("background_task", { description: "second", prompt: "p", agent: "general" }, { messageID: "msg_ids" });
    const b = launched.match(/task_id: (\S+)/)![1];
    assert.match(launched, new RegExp(`^Launched background task ${b}:`));
    for (let i = 0; i < 5; i++) await f.launch({ description: `more ${i}` });
    const list = await f.call("background_list", {});
    for (const id of [a, b]) assert.ok(list.split("\n").some((line) => line.startsWith(`${id} `)), `${id} in:\n${list}`);
    assert.match(await f.call("background_output", { task_id: a.slice(4, 12) }), new RegExp(`^Task ${a}: first`, "m"));
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(a, "done");
    await f.flush();
    const note = f.host.promptsTo(PARENT)[0].text;
    assert.match(note, new RegExp(`Background task ${a} "first" completed`));
    assert.ok(f.host.toasts.some((t) => t.includes(a)), f.host.toasts.join("\n"));
    assert.match(await f.call("background_cancel", { task_id: b }), new RegExp(`^${b}: cancelled`));
    assert.match(await f.call("background_task", { description: "x", prompt: "p", agent: "general", resume: a.slice(4) }), new RegExp(`Resumed background task ${a} `));
  });
});

describe("background_list", () => {
  it("lists only the calling session's tasks, filters by status, and marks resumed tasks", async () => {
    const f = coreFixture();
    f.host.addSession(OTHER);
    const mine = await f.launch({ description: "mine" });
    await f.launch({ description: "theirs" }, { sessionID: OTHER });
    f.host.finishRun(mine, "ok");
    await f.flush();
    await f.call("background_task", { description: "again", prompt: "more", agent: "general", resume: mine });
    const list = await f.call("background_list", {});
    assert.match(list, /mine/);
    assert.ok(!list.includes("theirs"));
    assert.match(list, /\(resumed\)/);
    assert.equal(await f.call("background_list", { status: "completed" }), "No background tasks found with status completed.");
    assert.equal(await f.call("background_list", {}, { sessionID: "ses_nobody" }), "No background tasks found.");
  });
});

describe("resume", () => {
  it("continues a completed task in its own session, counts it, and returns to completed", async () => {
    const f = coreFixture();
    const a = await f.launch({ agent: "explore" });
    f.host.finishRun(a, "first");
    await f.flush();
    const out = await f.call("background_task", { description: "x", prompt: "follow up", agent: "general", resume: a });
    assert.match(out, /Resumed background task .* \(resume #1\)/);
    const prompt = f.host.promptsTo(a).at(-1)!;
    assert.equal(prompt.text, "follow up");
    assert.equal(prompt.agent, "explore");
    assert.equal(f.store.get(a)!.status, "resumed");
    await f.clock.advance(10);
    f.host.finishRun(a, "second");
    await f.flush();
    assert.equal(f.store.get(a)!.status, "completed");
    assert.equal(f.store.get(a)!.result, "second");
    assert.equal(f.store.get(a)!.resumeCount, 1);
  });

  it("does not complete a resumed task from the previous answer", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "first");
    await f.flush();
    await f.clock.advance(10);
    await f.call("background_task", { description: "x", prompt: "more", agent: "general", resume: a });
    f.host.emit({ type: "idle", sessionID: a });
    await f.flush();
    assert.equal(f.store.get(a)!.status, "resumed");
  });

  it("refuses a running task, naming its status", async () => {
    const f = coreFixture();
    const a = await f.launch();
    assert.match(await f.call("background_task", { description: "x", prompt: "p", agent: "general", resume: a }), /is running; only a completed task can be resumed/);
  });

  it("refuses a task already being resumed", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "first");
    await f.flush();
    await f.call("background_task", { description: "x", prompt: "p", agent: "general", resume: a });
    assert.match(await f.call("background_task", { description: "x", prompt: "p", agent: "general", resume: a }), /already being resumed/);
  });

  it("refuses when the child session is gone, suggesting a new task", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "first");
    await f.flush();
    f.host.sessions.delete(a);
    assert.match(await f.call("background_task", { description: "x", prompt: "p", agent: "general", resume: a }), /no longer exists.*new background_task/);
    assert.equal(f.store.get(a)!.status, "completed");
  });
});

describe("cancel and clear", () => {
  it("aborts the child and marks it cancelled; cancelling twice is harmless", async () => {
    const f = coreFixture();
    const a = await f.launch();
    assert.match(await f.call("background_cancel", { task_id: a }), /cancelled\./);
    assert.deepEqual(f.host.aborted, [a]);
    assert.equal(f.store.get(a)!.status, "cancelled");
    assert.match(await f.call("background_cancel", { task_id: a }), /already cancelled/);
    f.host.emit({ type: "error", sessionID: a, name: "MessageAbortedError", message: "aborted" });
    assert.equal(f.store.get(a)!.status, "cancelled");
  });

  it("cancels every running task of a batch", async () => {
    const f = coreFixture();
    const a = await f.launch({}, { messageID: "msg_cb" });
    const b = await f.launch({}, { messageID: "msg_cb" });
    await f.call("background_cancel", { task_id: "msg_cb" });
    assert.deepEqual(f.host.aborted.sort(), [a, b].sort());
  });

  it("clears only settled tasks and says how many still run", async () => {
    const f = coreFixture();
    const a = await f.launch({ description: "finished one" });
    await f.launch({ description: "still going" });
    f.host.finishRun(a, "ok");
    await f.flush();
    const out = await f.call("background_clear", {});
    assert.match(out, /Cleared 1 finished task\. 1 still running .* background_cancel/);
    const list = await f.call("background_list", {});
    assert.ok(!list.includes("finished one"));
    assert.match(list, /still going/);
    assert.equal(f.host.aborted.length, 0);
  });
});

describe("parent deletion", () => {
  it("cancels the parent's running children and drops its tasks", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.emit({ type: "deleted", sessionID: PARENT });
    await f.flush();
    assert.deepEqual(f.host.aborted, [a]);
    assert.equal(f.store.list({ includeCleared: true }).length, 0);
    assert.equal(f.host.promptsTo(PARENT).length, 0);
    assert.deepEqual(f.store.events(a), [], "the child's event log goes with it");
    assert.deepEqual(f.store.pendingNotifications(), []);
  });
});

describe("resources", () => {
  it("remembers nothing about sessions that went idle with nothing to deliver, and asks the host nothing", async () => {
    const f = coreFixture();
    f.host.statusCalls = 0;
    for (let i = 0; i < 50; i++) {
      f.host.emit({ type: "status", sessionID: `ses_other${i}`, status: "busy" });
      f.host.emit({ type: "idle", sessionID: `ses_other${i}` });
    }
    await f.flush();
    assert.equal(f.manager.debugCounts().rememberedSessions, 0);
    assert.equal(f.host.statusCalls, 0);
  });

  it("holds no timers, waiters or tracked tasks once everything settled and was delivered", async () => {
    const f = coreFixture();
    const a = await f.launch();
    assert.equal(f.manager.debugCounts().pollTimer, 1);
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(a, "ok");
    await f.clock.advance(5000);
    f.host.setActivity(PARENT, "idle"); // the turn the notification started is over
    await f.flush();
    assert.deepEqual(f.manager.debugCounts(), { pollTimer: 0, waiters: 0, trackedTasks: 0, rememberedSessions: 0 });
    assert.equal(f.clock.pendingTimers(), 0);
  });
});

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, MOCK_MODEL, type Stack } from "../harness/plugin-stack.ts";

const task = (description: string, prompt: string, extra: Record<string, unknown> = {}) =>
  call("background_task", { description, prompt, agent: "general", ...extra });

describe("the tools on the real host", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  /** Has the parent's model call tools (one user prompt) and returns the outputs of `tool` from that turn. */
  async function turn(parent: string, lines: string[], tool: string): Promise<string[]> {
    const before = (await toolOutputs(stack, parent, tool)).length;
    await stack.say(parent, lines.join("\n"));
    return (await toolOutputs(stack, parent, tool)).slice(before);
  }

  async function launch(parent: string, description: string, prompt: string): Promise<string> {
    const [out] = await turn(parent, [task(description, prompt)], "background_task");
    const [id] = taskIdsIn(out);
    assert.ok(id, `no task id in: ${out}`);
    return id;
  }

  const waitForNotification = (parent: string, taskId: string) =>
    waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(taskId)), { timeoutMs: 15_000, what: `notification for ${taskId}` });

  it("launches a child of the parent, and the parent is told the result exactly once", async () => {
    const parent = await stack.newSession("parent: launch");
    const id = await launch(parent, "find answer", "REPLY the answer is 42");
    const child = await stack.server.client.session.get({ path: { id } });
    assert.equal(child.data?.parentID, parent);
    const note = await waitForNotification(parent, id);
    assert.match(note, /status="completed"/);
    assert.match(note, /the answer is 42/);
    await waitUntil(() => stack.mock.requests().some((r) => JSON.stringify(r.body.messages).includes(`task_id=\\"${id}\\"`)), { what: "a parent turn that saw the notification" });
    assert.equal((await stack.notifications(parent)).filter((n) => n.includes(id)).length, 1);
  });

  it("background_output is non-blocking by default, and block waits for the result", async () => {
    const parent = await stack.newSession("parent: output");
    const id = await launch(parent, "slow job", "SLOW 1500\nREPLY slow result");
    const [now] = await turn(parent, [call("background_output", { task_id: id })], "background_output");
    assert.match(now, /Status: running/);
    const [waited] = await turn(parent, [call("background_output", { task_id: id, block: true, timeout: 20 })], "background_output");
    assert.match(waited, /Status: completed/);
    assert.match(waited, /slow result/);
  });

  it("aborting the parent while it blocks on background_output ends the wait at once; the child keeps running", async () => {
    const parent = await stack.newSession("parent: abort while blocked");
    const id = await launch(parent, "very slow job", "SLOW 20000\nREPLY much later");
    const line = call("background_output", { task_id: id, block: true, timeout: 60 });
    await stack.server.client.session.promptAsync({ path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: line }] } });
    const blocking = () => stack.messages(parent).then((all) => all.flatMap((m) => m.parts).some((p) => p.tool === "background_output" && p.state?.status === "running"));
    await waitUntil(blocking, { timeoutMs: 15_000, what: "background_output blocking" });
    const abortedAt = Date.now();
    await stack.server.client.session.abort({ path: { id: parent } });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined && !(await blocking()), { timeoutMs: 10_000, what: "the parent's turn over" });
    assert.ok(Date.now() - abortedAt < 5000, "the wait ended with the turn, not at its 60 s timeout");
    const [status] = await turn(parent, [call("background_output", { task_id: id })], "background_output");
    assert.match(status, /Status: running/, "the child itself keeps running");
  });

  it("block with a short timeout says it timed out", async () => {
    const parent = await stack.newSession("parent: timeout");
    const id = await launch(parent, "slower job", "SLOW 4000\nREPLY eventually");
    const [out] = await turn(parent, [call("background_output", { task_id: id, block: true, timeout: 1 })], "background_output");
    assert.match(out, /Timed out after waiting 1s/);
    assert.match(out, /Status: running/);
  });

  it("background_list shows only the calling session's tasks", async () => {
    const a = await stack.newSession("parent A");
    const b = await stack.newSession("parent B");
    const idA = await launch(a, "task of A", "REPLY a");
    await launch(b, "task of B", "REPLY b");
    const [listA] = await turn(a, [call("background_list", {})], "background_list");
    assert.match(listA, /task of A/);
    assert.ok(listA.startsWith(`${idA} `), `the full id launch returned, in: ${listA}`);
    assert.doesNotMatch(listA, /task of B/);
    const fresh = await stack.newSession("parent C");
    const [listC] = await turn(fresh, [call("background_list", {})], "background_list");
    assert.equal(listC, "No background tasks found.");
  });

  it("resume continues a completed task in its own session; refusals name the reason", async () => {
    const parent = await stack.newSession("parent: resume");
    const id = await launch(parent, "resumable", "REPLY first answer");
    await waitForNotification(parent, id);
    const [resumed] = await turn(parent, [task("again", "SLOW 1500\nREPLY second answer", { resume: id })], "background_task");
    assert.match(resumed, /Resumed background task .* \(resume #1\)/);
    const [twice] = await turn(parent, [task("again", "REPLY x", { resume: id })], "background_task");
    assert.match(twice, /already being resumed/);
    const second = await waitUntil(async () => (await stack.notifications(parent)).filter((n) => n.includes(id))[1], { timeoutMs: 15_000, what: "second notification" });
    assert.match(second, /second answer/);
    assert.match(second, /resumed 1x/);
    const childMessages = await stack.messages(id);
    assert.ok(childMessages.some((m) => JSON.stringify(m.parts).includes("first answer")), "the child kept its history");
    const [list] = await turn(parent, [call("background_list", {})], "background_list");
    assert.match(list, /\(resumed\)\s+completed/);

    const running = await launch(parent, "still running", "SLOW 3000\nREPLY later");
    const [notDone] = await turn(parent, [task("x", "REPLY y", { resume: running })], "background_task");
    assert.match(notDone, /is running; only a completed task can be resumed/);

    await stack.server.client.session.delete({ path: { id } });
    const [gone] = await turn(parent, [task("x", "REPLY y", { resume: id })], "background_task");
    // The task stays in the store (only a tracked child's deletion settles it): the host's missing session is the reason.
    assert.match(gone, new RegExp(`Task ${id}'s session no longer exists, so it cannot be resumed`));
  });

  it("two resumes of one task in one response: one is accepted, the other refused, and the child gets one prompt", async () => {
    const parent = await stack.newSession("parent: double resume");
    const id = await launch(parent, "resume twice", "REPLY first answer");
    await waitForNotification(parent, id);
    const outs = await turn(parent, [task("again", "REPLY second answer", { resume: id }), task("again", "REPLY third answer", { resume: id })], "background_task");
    assert.equal(outs.length, 2, outs.join("\n"));
    assert.equal(outs.filter((o) => /^Resumed background task .* \(resume #1\)/.test(o)).length, 1, outs.join("\n"));
    assert.equal(outs.filter((o) => /already being resumed; wait for its result with background_output/.test(o)).length, 1, outs.join("\n"));
    const second = await waitUntil(async () => (await stack.notifications(parent)).filter((n) => n.includes(id))[1], { timeoutMs: 15_000, what: "the resume's notification" });
    assert.match(second, /resumed 1x/);
    const child = await stack.messages(id);
    const prompts = child.filter((m) => m.info.role === "user").map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""));
    assert.equal(prompts.length, 2, `one prompt per run: ${JSON.stringify(prompts)}`);
    assert.equal(prompts.filter((p) => /REPLY (second|third) answer/.test(p)).length, 1);
  });

  it("background_clear hides finished tasks, keeps running ones and says so; ids work by prefix", async () => {
    const parent = await stack.newSession("parent: clear");
    const done = await launch(parent, "finished job", "REPLY finished");
    await waitForNotification(parent, done);
    const running = await launch(parent, "running job", "SLOW 4000\nREPLY later");
    const [cleared] = await turn(parent, [call("background_clear", {})], "background_clear");
    assert.match(cleared, /Cleared 1 finished task\. 1 still running/);
    const [list] = await turn(parent, [call("background_list", {})], "background_list");
    assert.doesNotMatch(list, /finished job/);
    assert.match(list, /running job/);
    const [byPrefix] = await turn(parent, [call("background_output", { task_id: running.slice(4, 16) })], "background_output");
    assert.match(byPrefix, /running job/);
  });

  it("the notification follows the agent the user switched the parent to", async () => {
    const parent = await stack.newSession("parent: switch agent");
    const id = await launch(parent, "slow for switch", "SLOW 2500\nREPLY after the switch");
    const switched = await stack.server.client.session.prompt({
      path: { id: parent },
      body: { agent: "plan", model: MOCK_MODEL, parts: [{ type: "text", text: "REPLY now in plan" }] },
    });
    assert.equal(switched.error, undefined);
    await waitForNotification(parent, id);
    const messages = await stack.messages(parent);
    const note = messages.find((m) => m.info.role === "user" && m.parts.some((p) => p.type === "text" && String(p.text).includes(`task_id="${id}"`)))!;
    assert.equal(note.info.agent, "plan");
  });

  it("fork together with resume is refused and creates no session", async () => {
    const parent = await stack.newSession("parent: fork+resume");
    const sessionsBefore = (await stack.server.client.session.list()).data?.length;
    const [out] = await turn(parent, [task("x", "REPLY y", { fork: true, resume: "ses_whatever" })], "background_task");
    assert.match(out, /mutually exclusive/);
    assert.equal((await stack.server.client.session.list()).data?.length, sessionsBefore);
  });

  it("cancel aborts the child: it stops calling the model and is marked cancelled", async () => {
    const parent = await stack.newSession("parent: cancel");
    const id = await launch(parent, "long job", "SLOW 8000\nREPLY never seen");
    await waitUntil(() => stack.mock.inFlight().current > 0, { what: "the child's model call in flight" });
    const [out] = await turn(parent, [call("background_cancel", { task_id: id })], "background_cancel");
    assert.match(out, /cancelled\./);
    await waitUntil(() => stack.mock.requests().some((r) => r.aborted && JSON.stringify(r.body.messages).includes("never seen")), { what: "the child's request aborted" });
    const [status] = await turn(parent, [call("background_output", { task_id: id })], "background_output");
    assert.match(status, /Status: cancelled/);
    const childRequests = () => stack.mock.requests().filter((r) => JSON.stringify(r.body.messages).includes("never seen")).length;
    const count = childRequests();
    // A fixed wait: a cancelled child that is prompted again could be at any later time, and no event marks "never".
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(childRequests(), count, "no new model call from the cancelled child");
  });

  it("eight tasks from one parent message: each result reaches the parent exactly once, in one parent turn", async () => {
    const parent = await stack.newSession("parent: fan-out");
    const lines = Array.from({ length: 8 }, (_, i) => task(`job ${i}`, `SLOW ${200 + i * 150}\nREPLY result number ${i}`));
    const outs = await turn(parent, lines, "background_task");
    const ids = outs.flatMap(taskIdsIn);
    assert.equal(ids.length, 8);
    await waitUntil(async () => {
      const notes = (await stack.notifications(parent)).join("\n");
      return ids.every((id) => notes.includes(id));
    }, { timeoutMs: 20_000, what: "all eight notifications" });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    const notes = await stack.notifications(parent);
    for (const [i, id] of ids.entries()) {
      assert.equal(notes.filter((n) => n.includes(`task_id="${id}"`)).length, 1, `task ${i} notified once`);
      assert.equal(notes.filter((n) => n.includes(`result number ${i}`)).length, 1);
    }
    const messages = await stack.messages(parent);
    const noteIds = new Set(messages.filter((m) => m.info.role === "user" && JSON.stringify(m.parts).includes("background-task-notification")).map((m) => m.info.id));
    const turnsFromNotes = messages.filter((m) => m.info.role === "assistant" && noteIds.has(m.info.parentID)).length;
    assert.equal(turnsFromNotes, 1, `${noteIds.size} notification messages started ${turnsFromNotes} parent turns`);
  });
});

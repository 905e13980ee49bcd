import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";

describe("launch on the real host", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it("launches a child of the parent, and the parent is told the result exactly once", async () => {
    const parent = await stack.newSession("parent: launch");
    await stack.say(parent, call("background_task", { description: "find answer", prompt: "REPLY the answer is 42", agent: "general" }));
    const [launched] = await toolOutputs(stack, parent, "background_task");
    assert.match(launched, /Launched background task/);
    const [taskId] = taskIdsIn(launched);
    const child = await stack.server.client.session.get({ path: { id: taskId } });
    assert.equal(child.data?.parentID, parent);

    const notes = await waitUntil(async () => {
      const found = await stack.notifications(parent);
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 15_000, what: "parent notification" });
    assert.equal(notes.length, 1);
    assert.match(notes[0], /status="completed"/);
    assert.match(notes[0], /the answer is 42/);

    const childRequests = stack.mock.requests().filter((r) => JSON.stringify(r.body.messages).includes("REPLY the answer is 42"));
    assert.ok(childRequests.length >= 1, "the child called the model");
    // The notification started a parent turn: the model saw it.
    await waitUntil(() => stack.mock.requests().some((r) => JSON.stringify(r.body.messages).includes("background-task-notification")), { what: "parent turn with the notification" });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await stack.notifications(parent)).length, 1, "still exactly one notification");
  });
});

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";

describe("polling fallback on the real host", () => {
  let stack: Stack;
  before(async () => {
    // idleEvents: false makes the plugin ignore every session.idle, as if all were missed.
    stack = await startStack({ pluginOptions: { idleEvents: false, pollIntervalMs: 300 } });
  });
  after(async () => {
    await stack?.stop();
  });

  it("settles a task whose idle event was missed, and the parent is told once", async () => {
    const parent = await stack.newSession("parent: polling");
    const logFrom = stack.server.logs().length;
    await stack.say(parent, call("background_task", { description: "polled", prompt: "REPLY polled result", agent: "general" }));
    const [id] = taskIdsIn((await toolOutputs(stack, parent, "background_task"))[0]);
    const note = await waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(id)), { timeoutMs: 15_000, what: "notification" });
    assert.match(note, /polled result/);
    // Logged once no task is unsettled and the outbox is empty: nothing is left that could notify again.
    await waitUntil(() => stack.server.logs().includes("background tasks idle", logFrom), { what: "the plugin idle" });
    assert.equal((await stack.notifications(parent)).filter((n) => n.includes(id)).length, 1);
  });
});

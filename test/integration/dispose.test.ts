import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchTask, startStack, waitUntil, type Stack } from "../harness/plugin-stack.ts";

/** OpenCode disposes a project's instance (and so its plugins) on request; the next request loads them again. */
describe("dispose on the real host", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ pluginOptions: { pollIntervalMs: 500 } });
  });
  after(async () => {
    await stack?.stop();
  });

  it("disposing the instance aborts the child and disposes the plugin; the reloaded plugin tells the child to continue and notifies once", async () => {
    const parent = await stack.newSession("parent: dispose");
    const id = await launchTask(stack, parent, { description: "spans a dispose", prompt: "SLOW 3000\nREPLY after the dispose" });
    const from = stack.server.logs().length;
    const disposed = await stack.server.client.instance.dispose();
    assert.equal(disposed.error, undefined);
    await waitUntil(() => stack.server.logs().includes("background tasks disposed", from), { timeoutMs: 10_000, what: "the plugin's dispose hook" });
    // The next request loads the plugin again; its start finds the child's run aborted under it.
    const done = await waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(`task_id="${id}" status="completed"`)), { timeoutMs: 20_000, what: "the completion after the dispose" });
    assert.match(done, /OpenCode was restarted/, "the result is the answer to the continue prompt");
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { timeoutMs: 15_000, what: "parent idle" });
    const notes = (await stack.notifications(parent)).filter((n) => n.includes(`task_id="${id}"`));
    assert.equal(notes.filter((n) => /status="completed"/.test(n)).length, 1, notes.join("\n---\n"));
    assert.equal(notes.filter((n) => /status="error"|status="cancelled"/.test(n)).length, 0, notes.join("\n---\n"));
    assert.ok(notes.some((n) => n.includes("interrupted by an OpenCode restart")), "the parent was told about the interruption");
    assert.doesNotMatch(stack.server.logs().slice(from), /unhandled/i);
  });
});

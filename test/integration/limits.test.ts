import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, pluginDbPath, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, type MockRequest } from "../harness/mock-model.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const POLL_MS = 500;
const STATS_MS = 200;
const task = (description: string, prompt: string) => call("background_task", { description, prompt, agent: "general" });

describe("limits and faults on the real host", () => {
  let stack: Stack;
  const childInFlight = { current: 0, peak: 0 };
  const failedOnce = new Set<string>();

  // Children's answers are timed here, so the in-flight count covers exactly the children's calls.
  async function responder(req: MockRequest) {
    const text = lastUserText(req);
    const fan = text.match(/^FANOUT (\d+)$/m);
    if (fan && !req.body.messages.some((m) => m.role === "assistant")) {
      childInFlight.current++;
      childInFlight.peak = Math.max(childInFlight.peak, childInFlight.current);
      await sleep(250);
      childInFlight.current--;
      return { text: `fan result ${fan[1]}` };
    }
    const flaky = text.match(/^FLAKY (\w+)$/m);
    if (flaky && !failedOnce.has(flaky[1])) {
      failedOnce.add(flaky[1]);
      return { error: { status: 500 as const, message: "temporary outage" } };
    }
    if (flaky) return { text: `recovered ${flaky[1]}` };
    return defaultResponder(req);
  }

  before(async () => {
    stack = await startStack({
      responder,
      pluginOptions: { maxConcurrentPerModel: 5, maxConcurrentTotal: 20, maxRunSeconds: 4, pollIntervalMs: POLL_MS },
      config: { permission: { bash: "ask" } },
      // The plugin logs its host call totals at this interval: the idle test reads them.
      env: { OPENCODE_ERRANDS_STATS_MS: String(STATS_MS) },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  const noteFor = (parent: string, id: string, what: string) =>
    waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(`task_id="${id}"`) && !n.includes("interrupted")), { timeoutMs: 30_000, what });

  it("50 tasks with a concurrency of 5: never more than 5 children at the model, started in order, each result delivered once", async () => {
    const parent = await stack.newSession("parent: fan-out 50");
    const lines = Array.from({ length: 50 }, (_, i) => task(`fan ${i}`, `FANOUT ${i}`));
    await stack.say(parent, lines.join("\n"));
    const outputs = await toolOutputs(stack, parent, "background_task");
    const ids = outputs.flatMap(taskIdsIn);
    assert.equal(ids.length, 50);
    const saidQueued = new Set(outputs.filter((o) => o.includes("(queued:")).flatMap(taskIdsIn));
    await waitUntil(async () => {
      const notes = (await stack.notifications(parent)).join("\n");
      return ids.every((id) => notes.includes(id));
    }, { timeoutMs: 90_000, intervalMs: 250, what: "all 50 notifications" });
    assert.ok(childInFlight.peak <= 5, `peak of children at the model: ${childInFlight.peak}`);
    assert.equal(childInFlight.peak, 5, "the limit was actually reached");
    const notes = await stack.notifications(parent);
    for (let i = 0; i < 50; i++) assert.equal(notes.filter((n) => n.includes(`fan result ${i}\n`)).length, 1, `result ${i} delivered once`);

    const reader = ReadModel.open(pluginDbPath(stack.server));
    try {
      // OpenCode may run the 50 tool calls concurrently, so the launch order is the plugin's, from its log.
      const inOrder = (kind: string) => reader.tasks.allEvents().filter((e) => e.kind === kind && ids.includes(e.taskId)).map((e) => e.taskId);
      assert.equal(inOrder("launched").length, 50);
      assert.deepEqual(inOrder("started"), inOrder("launched"), "started in launch order");
      // "queued" only for a task that really waited: one that got a slot at launch starts in the same
      // transaction; a waiting one starts after a child's run (at least 250 ms) ended.
      const at = (kind: string, id: string) => reader.tasks.allEvents().find((e) => e.kind === kind && e.taskId === id)!.at;
      const waited = ids.filter((id) => at("started", id) - at("launched", id) > 100);
      assert.deepEqual(ids.filter((id) => saidQueued.has(id)), waited);
      assert.ok(waited.length >= 45, `${waited.length} waited`);
    } finally {
      reader.close();
    }
  });

  /** A new parent launches one task and waits for its notification. */
  async function runOne(description: string, prompt: string): Promise<string> {
    const parent = await stack.newSession(`parent: ${description}`);
    await stack.say(parent, task(description, prompt));
    const [id] = taskIdsIn((await toolOutputs(stack, parent, "background_task"))[0]);
    return noteFor(parent, id, `notification of "${description}"`);
  }

  it("a 400 from the model settles the task as error with the provider's message", async () => {
    const note = await runOne("bad request", "FAIL 400 the provider rejected this request");
    assert.match(note, /status="error"/);
    assert.match(note, /the provider rejected this request/);
  });

  it("a 500 is retried by OpenCode and the task then completes", async () => {
    const note = await runOne("flaky model", "FLAKY alpha");
    assert.match(note, /status="completed"/);
    assert.match(note, /recovered alpha/);
  });

  it("a model that answers too slowly hits maxRunSeconds: the child is aborted and the task fails", async () => {
    const note = await runOne("very slow", "SLOW 30000\nREPLY too late");
    assert.match(note, /status="error"/);
    assert.match(note, /Timed out after 4s/);
    await waitUntil(() => stack.mock.requests().some((r) => r.aborted && JSON.stringify(r.body.messages).includes("too late")), { what: "the slow call aborted" });
  });

  it("a child waiting for a permission: the parent gets a toast and sees it in background_output", async () => {
    const parent = await stack.newSession("parent: permission");
    const from = stack.events.events.length;
    await stack.say(parent, task("needs permission", call("bash", { command: "echo guarded", description: "guarded echo" })));
    const [id] = taskIdsIn((await toolOutputs(stack, parent, "background_task"))[0]);
    const toast = await stack.events.waitForEvent((e) => e.type === "tui.toast.show" && JSON.stringify(e.properties).includes("waiting for"), 20_000, from);
    assert.match(JSON.stringify(toast.properties), /needs permission/);
    await stack.say(parent, call("background_output", { task_id: id }));
    const out = (await toolOutputs(stack, parent, "background_output")).at(-1)!;
    assert.match(out, /WAITING FOR PERMISSION: bash/);
    await stack.say(parent, call("background_cancel", { task_id: id }));
  });

  it("once everything settled the plugin stops polling (no more host calls) and holds no waiters or per-task entries", async () => {
    // The poll loop logs the idle line as it stops, so its pollTimer=0 holds by construction. That
    // no poll timer is left shows in the host call totals: they stay put over three poll intervals.
    const quiet = Math.ceil((3 * POLL_MS) / STATS_MS);
    const idle = await waitUntil(() => {
      const logs = stack.server.logs();
      const at = logs.lastIndexOf("background tasks idle");
      if (at < 0) return undefined;
      const totals = [...logs.slice(at).matchAll(/background tasks host calls.* total=(\d+)/g)].map((m) => Number(m[1]));
      const settled = totals.length > quiet && totals.at(-1) === totals.at(-1 - quiet);
      return settled ? logs.slice(at).split("\n")[0] : undefined;
    }, { timeoutMs: 30_000, intervalMs: STATS_MS, what: "an idle line followed by no host calls for three poll intervals" });
    assert.match(idle, /waiters=0/);
    assert.match(idle, /trackedTasks=0/);
  });
});

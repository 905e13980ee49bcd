import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";

const resumeArgs = (id: string) => ({ description: "again", prompt: "follow up", agent: "general", resume: id });

describe("races in the core", () => {
  it("two resumes of one completed task in one response: one is accepted, the other refused", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.finishRun(a, "first");
    await f.flush();
    await f.clock.advance(10);
    const outs = await Promise.all([f.call("background_task", resumeArgs(a)), f.call("background_task", resumeArgs(a))]);
    assert.equal(outs.filter((o) => /^Resumed background task/.test(o)).length, 1, outs.join("\n"));
    assert.equal(outs.filter((o) => /already being resumed; wait for its result with background_output/.test(o)).length, 1, outs.join("\n"));
    assert.equal(f.host.promptsTo(a).filter((p) => p.text === "follow up").length, 1);
    assert.equal(f.store.get(a)!.resumeCount, 1);
    assert.equal(f.store.events(a).filter((e) => e.kind === "resumed").length, 1);
    assert.doesNotMatch(await f.call("background_list", {}), /store is failing/, "a refusal inside a transaction is not a store error");
  });

  it("a launch whose prompt the host refuses is reported once, by the tool, and not notified", async () => {
    const f = coreFixture();
    f.host.setActivity(PARENT, "idle");
    f.host.failPrompt = true;
    const out = await f.call("background_task", { description: "d", prompt: "p", agent: "general" });
    assert.match(out, /did not start: .*prompt refused/);
    const [task] = f.store.list();
    assert.equal(task.status, "error");
    await f.clock.advance(5000);
    assert.deepEqual(f.store.pendingNotifications(), []);
    assert.equal(f.host.prompts.filter((p) => p.sessionID === PARENT).length, 0);
  });

  it("a resume whose prompt the host refuses is reported once, by the tool, and not notified", async () => {
    const f = coreFixture();
    const a = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(a, "first");
    await f.flush();
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const before = f.host.promptsTo(PARENT).length;
    f.host.failPrompt = true;
    assert.match(await f.call("background_task", resumeArgs(a)), /did not accept the prompt: prompt refused/);
    assert.equal(f.store.get(a)!.status, "error");
    f.host.setActivity(PARENT, "idle");
    await f.clock.advance(5000);
    assert.deepEqual(f.store.pendingNotifications(), []);
    assert.equal(f.host.promptsTo(PARENT).length, before);
  });

  it("launches made at the same moment with free slots are all started, none told queued", async () => {
    const f = coreFixture({ maxConcurrentPerModel: 3 });
    const outs = await Promise.all([0, 1, 2].map((i) => f.call("background_task", { description: `job ${i}`, prompt: "p", agent: "general" })));
    for (const out of outs) assert.doesNotMatch(out, /queued/, out);
    assert.deepEqual(f.store.list().map((t) => t.status), ["running", "running", "running"]);
    const fourth = await f.call("background_task", { description: "job 3", prompt: "p", agent: "general" });
    assert.match(fourth, /queued: the concurrency limit is reached/);
  });
});

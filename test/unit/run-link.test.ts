import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { startedAutomations, PARENT, MODEL } from "../helpers/automation-fixture.ts";

describe("a run links to its task by the task_id column", () => {
  it("is linked when the task is saved: a task that settles while its launch is still going ends its run", async () => {
    const f = startedAutomations();
    const a = f.create({ notify: "always" });
    // The child's first prompt hangs, as a slow server would: the launch has saved the task but not returned.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const prompt = f.host.prompt.bind(f.host);
    f.host.prompt = async (input) => {
      if (input.sessionID !== PARENT) await gate;
      return prompt(input);
    };
    const pending = f.runs.runNow(a.id);
    await f.flush();
    const [child] = f.children();
    assert.ok(child, "the task is saved before its prompt is sent");
    const started = f.autoStore.runs(a.id)[0]!;
    assert.deepEqual([started.status, started.taskId], ["starting", child]);

    await f.manager.cancel(f.manager.get(child)!, "stopped by the test");
    await f.flush();
    const ended = f.autoStore.run(started.id)!;
    assert.deepEqual([ended.status, ended.taskId], ["cancelled", child]);

    release();
    await pending;
    await f.flush();
    assert.equal(f.autoStore.run(started.id)!.status, "cancelled", "the launch returning later does not move an ended run");
  });

  it("a task whose batch id looks like a run's name is not taken for that run: only task_id links", async () => {
    const f = startedAutomations();
    const a = f.create({ notify: "always" });
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const prompt = f.host.prompt.bind(f.host);
    let gated = false;
    f.host.prompt = async (input) => {
      if (input.sessionID !== PARENT && !gated) {
        gated = true; // the run's child only: its launch waits while the look-alike comes and goes
        await gate;
      }
      return prompt(input);
    };
    const pending = f.runs.runNow(a.id);
    await f.flush();
    const run = f.autoStore.runs(a.id)[0]!;
    const lookalike = await f.manager.launch({
      parentSessionID: PARENT, parentMessageID: `auto_${a.id}_${run.runNo}`, parentAgent: "build", parentModel: MODEL,
      description: "look-alike", prompt: "hi", agent: "general", notify: false,
    });
    f.host.finishRun(lookalike.id, "not the run's answer");
    await f.flush();
    assert.equal(f.manager.get(lookalike.id)!.status, "completed");
    assert.equal(f.autoStore.run(run.id)!.status, "starting", "the run did not end with the look-alike's answer");

    release();
    await pending;
    f.host.finishRun(run.taskId!, "the run's own answer");
    await f.flush();
    const ended = f.autoStore.run(run.id)!;
    assert.deepEqual([ended.status, ended.summary], ["completed", "the run's own answer"]);
  });

  it("a run ends once: ending it again with the same outcome counts and tells nothing more; another outcome is refused", async () => {
    const f = startedAutomations(); // pauses after 2 failures in a row
    const a = f.create({ notify: "always" });
    const { run, task } = await f.runs.runNow(a.id);
    f.host.finishRun(task!.id, "", { error: "boom" });
    await f.flush();
    const ended = f.autoStore.run(run.id)!;
    assert.equal(ended.status, "error");
    const told = f.host.promptsTo(PARENT).length;
    f.autoStore.transaction(() => f.runs.recorder.finish(ended, { status: "error", error: "boom" }, task!.id));
    await f.flush();
    const after = f.catalog.get(a.id)!;
    assert.deepEqual([after.consecutiveFailures, after.enabled], [1, true], "one failure counted, not paused by a repeat");
    assert.equal(f.host.promptsTo(PARENT).length, told, "no second notice");
    assert.throws(() => f.autoStore.transaction(() => f.runs.recorder.finish(ended, { status: "completed", result: "late" }, task!.id)), /cannot go from error to completed/);
    assert.equal(f.autoStore.run(run.id)!.status, "error");
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { transition, IllegalTransitionError, type Task } from "../../src/core/task.ts";
import { parseOptions, DEFAULT_OPTIONS } from "../../src/options/options.ts";

function task(status: Task["status"]): Task {
  return {
    id: "ses_1", parentSessionID: "ses_p", batchId: "msg_1", description: "d", prompt: "p", agent: "general",
    model: { providerID: "m", modelID: "m" }, parentAgent: "build", status, isForked: false, resumeCount: 0,
    progress: { toolCalls: 0, lastTools: [], lastActivityAt: 0 }, createdAt: 0, promptedAt: 0,
  };
}

describe("transition", () => {
  it("settles once; settling again to the same status is a harmless no-op", () => {
    const t = task("running");
    assert.equal(transition(t, "completed", 5), true);
    assert.equal(t.settledAt, 5);
    assert.equal(transition(t, "completed", 9), false);
    assert.equal(t.settledAt, 5);
  });

  it("rejects illegal moves", () => {
    assert.throws(() => transition(task("cancelled"), "running", 1), IllegalTransitionError);
    assert.throws(() => transition(task("error"), "running", 1), IllegalTransitionError);
    assert.throws(() => transition(task("running"), "resumed", 1), IllegalTransitionError);
  });

  it("resuming counts and clears the previous result", () => {
    const t = task("completed");
    t.result = "old";
    transition(t, "resumed", 3);
    assert.equal(t.resumeCount, 1);
    assert.equal(t.result, undefined);
  });
});

describe("options", () => {
  it("defaults when absent", () => {
    assert.deepEqual(parseOptions(undefined), DEFAULT_OPTIONS);
    assert.equal(DEFAULT_OPTIONS.defaultBlockTimeoutSeconds, 30);
    assert.equal(DEFAULT_OPTIONS.maxBlockTimeoutSeconds, 600);
  });

  it("names every bad option with its value and range", () => {
    assert.throws(() => parseOptions({ pollIntervalMs: 5, resultCapChars: "big", nope: 1 }), (e: Error) =>
      /"pollIntervalMs" must be a number of ms from 100 to 60000, got 5/.test(e.message) &&
      /"resultCapChars"/.test(e.message) && /unknown option "nope"/.test(e.message));
  });

  it("refuses a default block timeout above the maximum", () => {
    assert.throws(() => parseOptions({ defaultBlockTimeoutSeconds: 100, maxBlockTimeoutSeconds: 50 }), /must not exceed/);
  });
});

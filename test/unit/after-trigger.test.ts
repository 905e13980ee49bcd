import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { afterKind, cycleThrough, AFTER_POLL_MS } from "../../src/triggers/kinds/after.ts";
import { upstreamRuns } from "../../src/triggers/upstream-runs.ts";
import { prepareTriggers } from "../../src/triggers/prepare-triggers.ts";
import { TriggerSpecError } from "../../src/triggers/trigger-input.ts";
import type { Run } from "../../src/automations/automation.ts";
import type { SourceContext, TriggerEvent, UpstreamRun } from "../../src/triggers/trigger-source.ts";
import { FakeClock } from "../helpers/fake-clock.ts";

/** Who waits for whom: downstream -> its upstreams. */
const chains = (edges: Record<string, string[]>) => (id: string) => (edges[id] ?? []).map((after) => ({ kind: "after", after }));

describe("after: cycles", () => {
  it("names the cycle in firing order, direct, long and on itself", () => {
    assert.deepEqual(cycleThrough("au2", { automationId: "au1", specsOf: chains({ au2: ["au1"] }) }), ["au1", "au2", "au1"]);
    assert.deepEqual(cycleThrough("au3", { automationId: "au1", specsOf: chains({ au3: ["au2"], au2: ["au1"] }) }), ["au1", "au2", "au3", "au1"]);
    assert.deepEqual(cycleThrough("au1", { automationId: "au1", specsOf: chains({}) }), ["au1", "au1"]);
    assert.equal(cycleThrough("au2", { automationId: "au1", specsOf: chains({ au2: ["au3"], au3: ["au2"] }) }), undefined, "a cycle elsewhere is not this one's");
    assert.equal(cycleThrough("au2", { automationId: "au1", specsOf: chains({ au2: ["au3"] }) }), undefined);
  });

  it("is refused before storing, with the trigger's index; an upstream of another project or none is refused too", async () => {
    const specs: Record<string, { kind: "after"; after: string; on: "success" }[]> = { au2: [{ kind: "after", after: "au1", on: "success" }] };
    const look = { directory: "/tmp", automationExists: (id: string) => ["au1", "au2"].includes(id), specsOf: (id: string) => specs[id] ?? [] };
    const trigger = (after: string) => ({ id: "tr", automationId: "au1", spec: afterKind.parse({ after }, { now: 0, defaultZone: "UTC" }) });
    await assert.rejects(prepareTriggers([trigger("au2")], look), (e: Error) => e instanceof TriggerSpecError && e.message.startsWith('triggers[0]: "after": "au2" would make a cycle: au1 -> au2 -> au1;'));
    await assert.rejects(prepareTriggers([trigger("au9")], look), /triggers\[0\]: "after": "au9" is not an automation of this project; give the id of one \(task_list shows them\)/);
    assert.deepEqual(await prepareTriggers([{ ...trigger("au1"), automationId: "au3" }], look), new Map(), "au3 after au1: no cycle, no webhook");
  });
});

describe("after: its source", () => {
  function start(on: "success" | "failure" | "any", runs: UpstreamRun[], state?: unknown, createdAt = 0) {
    const clock = new FakeClock();
    const events: TriggerEvent[] = [];
    const saved: unknown[] = [];
    let stored = state;
    const ctx = {
      directory: "/tmp", clock, createdAt, emit: (e: TriggerEvent) => void events.push(e), loadState: () => stored,
      saveState: (s: unknown) => void (saved.push(s), stored = s), setNote: () => {}, log: () => {}, ownWrites: () => new Set<string>(),
      runsAfter: (id: string, after: number) => (id === "au_up" ? runs.filter((r) => r.id > after) : []),
    } satisfies SourceContext;
    const source = afterKind.start!({ kind: "after", after: "au_up", on }, ctx, { githubApiUrl: "" });
    return { clock, events, saved, source, runs };
  }
  const run = (id: number, status: UpstreamRun["status"], result = `r${id}`, createdAt = 10): UpstreamRun => ({ id, runNo: id, createdAt, status, result });

  it("fires once per ended run that matches `on`, in order, remembering the last run seen", async () => {
    const s = start("success", [run(1, "completed"), run(2, "error", "boom"), run(3, "completed", "all good")]);
    await s.source;
    assert.deepEqual(s.events.map((e) => [e.summary, e.data]), [["au_up run #1 succeeded", "r1"], ["au_up run #3 succeeded", "all good"]]);
    assert.deepEqual(s.saved.at(-1), { lastRunId: 3 });
    await s.clock.advance(3 * AFTER_POLL_MS);
    assert.equal(s.events.length, 2, "nothing fires twice");
    (await s.source).stop();
    assert.equal(s.clock.pendingTimers(), 0);
  });

  it("failure fires on error and cancelled; a run still going holds back the later ones", async () => {
    const runs = [run(1, "active"), run(2, "cancelled")];
    const s = start("failure", runs);
    await s.source;
    assert.equal(s.events.length, 0, "run 1 has not ended: history stays in order");
    runs[0] = run(1, "error", "Error: tests failed");
    await s.clock.advance(AFTER_POLL_MS);
    assert.deepEqual(s.events.map((e) => e.summary), ["au_up run #1 failed", "au_up run #2 was cancelled"]);
    assert.equal(s.events[0]!.data, "Error: tests failed");
    (await s.source).stop();
  });

  it("runs from before the trigger was made do not fire; a restart goes on from its state", async () => {
    const s = start("any", [run(1, "completed", "old", 5), run(2, "completed", "new", 50)], undefined, 20);
    await s.source;
    assert.deepEqual(s.events.map((e) => e.data), ["new"]);
    (await s.source).stop();
    const again = start("any", [run(1, "completed"), run(2, "completed"), run(3, "completed", "third")], { lastRunId: 2 });
    await again.source;
    assert.deepEqual(again.events.map((e) => e.data), ["third"]);
    (await again.source).stop();
  });

  it("caps a long result", async () => {
    const s = start("any", [run(1, "completed", "x".repeat(20_000))]);
    await s.source;
    assert.ok(s.events[0]!.data!.length < 8100 && s.events[0]!.data!.endsWith("(cut at 8000 characters)"));
    (await s.source).stop();
  });
});

describe("after: upstream runs from the runs table", () => {
  it("oldest first, above the given id, skipped and missed rows left out, a completed run's task result or else its summary", () => {
    const rows = [
      { id: 5, status: "running", createdAt: 5, runNo: 4 }, { id: 4, status: "skipped", createdAt: 4 },
      { id: 3, status: "error", createdAt: 3, runNo: 3, summary: "Error: boom" }, { id: 2, status: "completed", createdAt: 2, runNo: 2, taskId: "t2", summary: "first line" },
      { id: 1, status: "completed", createdAt: 1, runNo: 1, taskId: "t1" },
    ] as unknown as Run[];
    assert.deepEqual(upstreamRuns(rows, 1, (id) => (id === "t2" ? "first line\nsecond line" : undefined)), [
      { id: 2, runNo: 2, createdAt: 2, status: "completed", result: "first line\nsecond line" },
      { id: 3, runNo: 3, createdAt: 3, status: "error", result: "Error: boom" },
      { id: 5, runNo: 4, createdAt: 5, status: "active", result: "" },
    ]);
  });
});

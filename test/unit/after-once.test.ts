import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { afterKind } from "../../src/triggers/kinds/after.ts";
import type { SourceContext, UpstreamRun } from "../../src/triggers/trigger-source.ts";

/** One process on the shared database, its layer started. */
function holder(dbPath: string) {
  const f = automationFixture(dbPath);
  after(() => f.close());
  f.host.setActivity(PARENT, "idle");
  f.runs.start();
  return f;
}

describe("after: each upstream run fires the chained automation once, across holders", () => {
  it("a holder that fires, then dies before saving its cursor: the next holder fires that upstream run again, and no second run is made", async () => {
    const db = tempDb();
    after(db.cleanup);
    const one = holder(db.path);
    const two = holder(db.path);
    const upstream = one.create({ title: "build" });
    const chained = one.create({ title: "deploy" }, [{ after: upstream.id, on: "any" }]);
    const triggerId = one.autoStore.triggers(chained.id)[0]!.id;
    const ended: UpstreamRun[] = [{ id: 7, runNo: 1, createdAt: 10, status: "completed", result: "built" }];

    // The source as a holder runs it; its state save never reaches the database (the holder dies right after firing).
    const startSource = (f: ReturnType<typeof holder>) => afterKind.start!({ kind: "after", after: upstream.id, on: "any" }, {
      directory: "/tmp", clock: f.clock, createdAt: 0, emit: (e) => void f.runs.fireEvent(triggerId, e),
      loadState: () => undefined, saveState: () => {}, setNote: () => {}, log: () => {}, ownWrites: () => new Set<string>(),
      runsAfter: (id, afterRunId) => (id === upstream.id ? ended.filter((r) => r.id > afterRunId) : []),
    } satisfies SourceContext, { githubApiUrl: "" });

    (await startSource(one)).stop();
    await one.flush();
    assert.equal(one.children().length, 1, "the first holder fired the run");
    for (const id of one.children()) one.host.finishRun(id, "deployed");
    await one.flush();
    assert.equal(one.autoStore.runs(chained.id)[0]!.status, "completed");

    (await startSource(two)).stop();
    await two.flush();
    const rows = two.autoStore.runs(chained.id);
    assert.deepEqual(rows.map((r) => [r.status, r.eventSummary]), [["completed", `${upstream.id} run #1 succeeded`]], "one row: upstream run 7 fired once");
  });

  it("a repeat while the chained run is still going folds into nothing; the next upstream run still queues", async () => {
    const db = tempDb();
    after(db.cleanup);
    const one = holder(db.path);
    const upstream = one.create({ title: "build" });
    const chained = one.create({ title: "deploy", overlap: "queue" }, [{ after: upstream.id, on: "any" }]);
    const triggerId = one.autoStore.triggers(chained.id)[0]!.id;
    const fire = (id: number) => one.runs.fireEvent(triggerId, { summary: `run ${id}`, key: `after:${id}` });
    fire(7);
    await one.flush();
    assert.equal(fire(7), undefined, "the same upstream run, reported again, fires nothing");
    await one.flush();
    assert.deepEqual(one.autoStore.runs(chained.id).map((r) => r.status), ["running"]);
    fire(8);
    assert.equal(fire(8), undefined);
    await one.flush();
    assert.deepEqual(one.autoStore.runs(chained.id).map((r) => [r.status, r.eventKey, r.eventFolded]), [["waiting", "after:8", undefined], ["running", "after:7", undefined]]);
  });
});

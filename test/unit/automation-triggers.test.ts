import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { nextOccurrence, occurrencesBetween, parseEvery, parseTrigger } from "../../src/automations/trigger-spec.ts";

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const cron = (pattern: string, timezone: string) => ({ spec: parseTrigger({ cron: pattern, timezone }, 0), createdAt: 0 });

describe("trigger times", () => {
  it("parses durations, refusing nonsense and anything under 1s", () => {
    assert.equal(parseEvery("90s"), 90_000);
    assert.equal(parseEvery("1h30m"), 5_400_000);
    assert.throws(() => parseEvery("500ms"), /shorter than the minimum of 1s/);
    assert.throws(() => parseEvery("5 minutes"), /not a duration/);
    assert.throws(() => parseEvery("0.5s"), /shorter than the minimum of 1s/);
  });

  it("cron follows daylight saving time in its zone (Europe/Paris, autumn and spring)", () => {
    const nine = cron("0 9 * * *", "Europe/Paris");
    assert.equal(iso(nextOccurrence(nine, Date.parse("2026-10-24T12:00:00Z"))), "2026-10-25T08:00:00.000Z", "CET after the change");
    assert.equal(iso(nextOccurrence(nine, Date.parse("2026-10-23T12:00:00Z"))), "2026-10-24T07:00:00.000Z", "CEST before it");
    assert.equal(iso(nextOccurrence(nine, Date.parse("2026-03-28T12:00:00Z"))), "2026-03-29T07:00:00.000Z", "CEST again in spring");
    // 02:30 does not exist on the spring-forward night: croner runs it once, at 03:30 CEST.
    const skipped = cron("30 2 * * *", "Europe/Paris");
    const spring = nextOccurrence(skipped, Date.parse("2026-03-28T12:00:00Z"))!;
    assert.equal(iso(spring), "2026-03-29T01:30:00.000Z");
    assert.equal(iso(nextOccurrence(skipped, spring)), "2026-03-30T00:30:00.000Z");
  });

  it("six fields put seconds first; counts of missed occurrences are capped for huge gaps", () => {
    const everyFive = cron("*/5 * * * * *", "UTC");
    assert.equal(iso(nextOccurrence(everyFive, Date.parse("2026-01-01T00:00:01Z"))), "2026-01-01T00:00:05.000Z");
    const week = occurrencesBetween(everyFive, Date.parse("2026-01-01T00:00:00Z"), Date.parse("2026-01-08T00:00:00Z"), 1000);
    assert.equal(week.capped, true);
    assert.equal(iso(week.last), "2026-01-08T00:00:00.000Z", "the latest occurrence is still exact");
  });
});

function setup(dbPath?: string) {
  const db = dbPath ? undefined : tempDb();
  const f = automationFixture(dbPath ?? db!.path);
  after(() => { f.close(); db?.cleanup(); });
  f.host.setActivity(PARENT, "idle");
  return f;
}

describe("scheduler edges with an injected clock", () => {
  it("a cron in a time zone fires across the DST change at 09:00 local both days", async () => {
    const f = setup();
    f.clock.jump(Date.parse("2026-10-24T06:00:00Z") - f.clock.now());
    f.runs.start();
    const a = f.create({ notify: "never" }, [{ cron: "0 9 * * *", timezone: "Europe/Paris" }]);
    await f.clock.advance(30 * 3600_000);
    const planned = f.autoStore.runs(a.id).reverse().map((r) => iso(r.plannedAt));
    assert.deepEqual(planned, ["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z"]);
  });

  it("a wall clock that jumps ahead fires each trigger once and records the rest as missed", async () => {
    const f = setup();
    f.runs.start();
    const a = f.create({ notify: "never" }, [{ every: "1m" }]);
    f.clock.jump(10 * 60_000 + 5_000);
    await f.clock.advance(60_000); // the timer keeps its delay; the one-minute cap bounds it anyway
    assert.equal(f.children().length, 1, "one run, not eleven");
    const [run, missed] = f.autoStore.runs(a.id);
    assert.equal(run!.status, "running");
    assert.equal(missed!.status, "missed");
    assert.equal(missed!.missedCount, 10);
  });

  it("a clock that jumps back fires nothing early and keeps the planned times", async () => {
    const f = setup();
    f.runs.start();
    const a = f.create({ notify: "never" }, [{ every: "5m" }]);
    f.clock.jump(-3600_000);
    await f.clock.advance(4 * 60_000);
    assert.equal(f.children().length, 0);
    f.clock.jump(3600_000);
    await f.clock.advance(60_000);
    assert.equal(f.children().length, 1);
    assert.equal(f.autoStore.runs(a.id)[0]!.plannedAt, f.catalog.get(a.id)!.createdAt + 5 * 60_000);
  });

  it("occurrences missed while no process ran: one missed row per trigger; catch_up once runs once, skip does not", async () => {
    const db = tempDb();
    after(() => db.cleanup());
    const down = automationFixture(db.path);
    const once = down.create({ catchUp: "once", notify: "never" }, [{ every: "1m" }, { every: "2m" }]);
    const skip = down.create({ catchUp: "skip", notify: "never" }, [{ every: "1m" }]);
    down.close();
    const up = setup(db.path);
    up.clock.jump(10 * 60_000 + 30_000);
    up.runs.start();
    await up.flush();
    const onceRuns = up.autoStore.runs(once.id);
    assert.deepEqual(onceRuns.filter((r) => r.status === "missed").map((r) => r.missedCount).sort(), [10, 5]);
    assert.equal(onceRuns.filter((r) => r.firedBy === "catch_up").length, 1, "one catch-up run for the definition");
    const skipRuns = up.autoStore.runs(skip.id);
    assert.deepEqual(skipRuns.map((r) => r.status), ["missed"]);
    assert.equal(up.children().length, 1);
    await up.clock.advance(60_000);
    assert.equal(up.autoStore.runs(skip.id).filter((r) => r.status === "running").length, 1, "then fires on schedule");
  });

  it("a once trigger fires at its time and is spent", async () => {
    const f = setup();
    f.runs.start();
    const at = new Date(f.clock.now() + 90_000).toISOString();
    const a = f.create({ notify: "never" }, [{ at }]);
    await f.clock.advance(89_999);
    assert.equal(f.children().length, 0);
    await f.clock.advance(1);
    assert.equal(f.children().length, 1);
    assert.equal(f.autoStore.triggers(a.id)[0]!.nextAt, undefined);
    await f.clock.advance(3600_000);
    assert.equal(f.children().length, 1);
  });

  it("two schedulers on one database fire each occurrence exactly once", async () => {
    const db = tempDb();
    after(() => db.cleanup());
    const one = setup(db.path);
    const a = one.create({ notify: "never", overlap: "queue" }, [{ every: "1s" }]);
    const two = setup(db.path);
    one.runs.start();
    two.runs.start();
    for (let i = 0; i < 10; i++) {
      await Promise.all([one.clock.advance(500), two.clock.advance(500)]);
      for (const f of [one, two]) for (const id of f.children()) if (f.manager.get(id)?.status === "running") f.host.finishRun(id, "ok");
      await Promise.all([one.flush(), two.flush()]);
    }
    const launched = one.children().length + two.children().length;
    const runs = one.autoStore.runs(a.id, 100).filter((r) => r.runNo !== undefined);
    assert.equal(launched, runs.length, "one child per run");
    const planned = runs.map((r) => r.plannedAt);
    assert.equal(new Set(planned).size, planned.length);
    assert.ok(runs.length >= 4, `${runs.length} runs in 5 s`);
  });

  it("session: continue resumes the same child each run, and starts a new one when it was deleted", async () => {
    const f = setup();
    f.runs.start();
    const a = f.create({ sessionMode: "continue", notify: "never" }, [{ every: "1m" }]);
    await f.clock.advance(60_000);
    const [child] = f.children();
    f.host.finishRun(child!, "first");
    await f.flush();
    await f.clock.advance(60_000);
    assert.equal(f.children().length, 1, "no new child");
    assert.equal(f.host.promptsTo(child!).length, 2);
    assert.match(f.host.promptsTo(child!)[1]!.text, /run #2/);
    f.host.finishRun(child!, "second");
    await f.flush();
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => [r.runNo, r.status, r.taskId]), [[2, "completed", child], [1, "completed", child]]);
    f.host.sessions.delete(child!);
    await f.clock.advance(60_000);
    const fresh = f.children().find((id) => id !== child);
    assert.ok(fresh, "a new child");
    assert.match(f.host.promptsTo(fresh!)[0]!.text, /could not be continued \(it was deleted\); this run starts a new one/);
  });
});

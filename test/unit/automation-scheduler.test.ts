import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, startedAutomations, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import type { Options } from "../../src/options/options.ts";

const setup = (overrides: Partial<Options> = {}) => startedAutomations(overrides);

/** Finishes every running child with `text` (or an error). */
async function finishAll(f: ReturnType<typeof setup>, text: string, error?: string) {
  for (const id of f.children()) if (["running", "resumed"].includes(f.manager.get(id)!.status)) f.host.finishRun(id, text, { error });
  await f.flush();
  f.host.setActivity(PARENT, "idle"); // a notification that woke the parent: its turn ends
  await f.flush();
}

describe("interval triggers", () => {
  it("fires on the interval's grid with one timer, runs report to the creator, max_runs ends it", async () => {
    const f = setup();
    const a = f.create({ maxRuns: 2 }, [{ every: "2s" }]);
    assert.equal(f.clock.pendingTimers(), 1, "one timer for the automation layer; the core's poller idles");
    await f.clock.advance(1999);
    assert.equal(f.children().length, 0);
    await f.clock.advance(1);
    assert.equal(f.children().length, 1);
    const first = f.manager.get(f.children()[0]!)!;
    assert.equal(first.batchId, `auto_${a.id}_1`);
    assert.equal(first.notify, false);
    assert.match(f.host.promptsTo(first.id)[0]!.text, new RegExp(`^\\[Automation "check ci" \\(${a.id}\\), run #1, fired by every 2s, planned `));
    await finishAll(f, "CI green");
    await f.clock.advance(2000);
    await finishAll(f, "CI red");
    await f.clock.advance(10_000);
    assert.equal(f.children().length, 2, "max_runs 2: no third run");
    const told = f.host.promptsTo(PARENT).map((p) => p.text);
    assert.equal(told.length, 2);
    assert.match(told[0]!, /run #1 .*completed:\nCI green/);
    assert.match(told[1]!, /run #2 .*completed:\nCI red/);
    assert.ok(f.catalog.get(a.id)!.doneAt !== undefined);
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => [r.runNo, r.status, r.notified]), [[2, "completed", true], [1, "completed", true]]);
    assert.equal(f.clock.pendingTimers(), 1, "nothing due: only the once-a-minute check for other processes' automations");
  });

  it("an idle report-to session hears about the first run when it ends, not at the next poll", async () => {
    const f = setup();
    f.create({ maxRuns: 1 }, [{ every: "2s" }]);
    await f.clock.advance(2000);
    assert.equal(f.children().length, 1);
    f.host.finishRun(f.children()[0]!, "first result");
    await f.flush();
    assert.equal(f.host.promptsTo(PARENT).length, 1, "told at once: an automation run is not the parent's own turn");
  });

  it("overlap skip: firings while the run is busy are recorded as skipped, on one row that counts them; never two at once", async () => {
    const f = setup();
    const a = f.create({}, [{ every: "1s" }]);
    await f.clock.advance(3000);
    assert.equal(f.children().length, 1);
    const statuses = () => f.autoStore.runs(a.id).map((r) => `${r.status}${r.skipReason ? `:${r.skipReason}` : ""}${r.skipCount ? `x${r.skipCount}` : ""}`);
    assert.deepEqual(statuses(), ["skipped:overlapx2", "running"]);
    await f.clock.advance(60_000);
    assert.deepEqual(statuses(), ["skipped:overlapx62", "running"], "a minute of firings: still one row");
    const streak = f.autoStore.runs(a.id)[0]!;
    assert.equal(streak.endedAt! - streak.createdAt, 61_000, "its first and latest firing, 62 firings a second apart");
    await finishAll(f, "ok");
    await f.clock.advance(1000);
    assert.equal(f.children().length, 2);
    await f.clock.advance(1000);
    assert.deepEqual(statuses().slice(0, 2), ["skipped:overlap", "running"], "a run between them: a new streak");
  });

  it("overlap queue: one waiting run (the newest) starts when the running one ends", async () => {
    const f = setup();
    const a = f.create({ overlap: "queue" }, [{ every: "1s" }]);
    await f.clock.advance(3000);
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => `${r.status}:${r.eventFolded ?? 0}`), ["waiting:1", "running:0"], "the newest firing waits, the one it replaced counted");
    await f.clock.advance(60_000);
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => `${r.status}:${r.eventFolded ?? 0}`), ["waiting:61", "running:0"], "a minute of firings: still one waiting row");
    await finishAll(f, "ok");
    assert.equal(f.children().length, 2, "the waiting run started at once");
    const newest = f.autoStore.runs(a.id).find((r) => r.runNo === 2)!;
    assert.equal(newest.plannedAt, f.clock.now());
  });
});

describe("notify policies", () => {
  async function runTwice(policy: string, results: [string, string?][]) {
    const f = setup();
    const a = f.create({ notify: policy as never, sessionMode: "fresh" }, [{ every: "1s" }]);
    for (const [text, error] of results) {
      await f.clock.advance(1000);
      await finishAll(f, text, error);
    }
    return { f, a, told: f.host.promptsTo(PARENT).map((p) => p.text), runs: f.autoStore.runs(a.id).reverse() };
  }

  it("on_change tells the first result and changed ones only, ignoring whitespace", async () => {
    const { told, runs } = await runTwice("on_change", [["A"], [" A \n"], ["B"]]);
    assert.equal(told.length, 2);
    assert.match(told[0]!, /\nA\n/);
    assert.match(told[1]!, /\nB\n/);
    assert.deepEqual(runs.map((r) => r.notified), [true, false, true]);
    assert.match(runs[1]!.notifyNote!, /same result/);
  });

  it("on_failure tells failures and the first success after one", async () => {
    const { told, runs } = await runTwice("on_failure", [["fine"], ["", "model broke"], ["fine again"], ["fine"]]);
    assert.deepEqual(runs.map((r) => r.notified), [false, true, true, false]);
    assert.match(told[0]!, /Error: model broke/);
  });

  it("never keeps history only; always tells every run", async () => {
    assert.equal((await runTwice("never", [["x"], ["y"]])).told.length, 0);
    assert.equal((await runTwice("always", [["x"], ["x"]])).told.length, 2);
  });
});

describe("failures", () => {
  it("pauses after automationFailurePause consecutive failures and tells the session why", async () => {
    const f = setup();
    const a = f.create({ notify: "never" }, [{ every: "1s" }]);
    await f.clock.advance(1000);
    await finishAll(f, "", "rate limited");
    assert.equal(f.catalog.get(a.id)!.enabled, true);
    await f.clock.advance(1000);
    await finishAll(f, "", "rate limited again");
    const paused = f.catalog.get(a.id)!;
    assert.equal(paused.enabled, false);
    assert.match(paused.pausedReason!, /2 consecutive failures; last: rate limited again/);
    const told = f.host.promptsTo(PARENT).map((p) => p.text);
    assert.equal(told.length, 1);
    assert.match(told[0]!, /PAUSED after 2 consecutive failed runs\. Last error: rate limited again/);
    assert.ok(f.host.toasts.some((t) => /paused after 2 failed runs/.test(t)));
    await f.clock.advance(5000);
    assert.equal(f.children().length, 2, "a paused automation does not fire");
    f.catalog.update(a.id, { enabled: true });
    await f.clock.advance(1000);
    assert.equal(f.children().length, 3, "resumed: fires again, the paused time is not missed");
    assert.equal(f.autoStore.runs(a.id).filter((r) => r.status === "missed").length, 0);
  });

  it("a success resets the failure count", async () => {
    const f = setup();
    const a = f.create({ notify: "never" }, [{ every: "1s" }]);
    for (const [text, error] of [["", "x"], ["ok"], ["", "y"]] as [string, string?][]) {
      await f.clock.advance(1000);
      await finishAll(f, text, error);
    }
    assert.equal(f.catalog.get(a.id)!.enabled, true);
    assert.equal(f.catalog.get(a.id)!.consecutiveFailures, 1);
  });
});

describe("report-to session", () => {
  it("gone: the run still happens and is recorded, a toast says so once, and task_list marks it until updated", async () => {
    const f = setup();
    const a = f.create({ notify: "always" }, [{ every: "1s" }]);
    f.host.sessions.delete(PARENT);
    await f.clock.advance(1000);
    const [child] = f.children();
    assert.ok(child, "the run started");
    f.host.finishRun(child!, "result nobody reads");
    await f.flush();
    const [run] = f.autoStore.runs(a.id);
    assert.equal(run!.status, "completed");
    assert.equal(run!.notified, false);
    assert.equal(run!.notifyNote, "report-to session gone");
    assert.equal(f.store.pendingNotifications().length, 0);
    await f.clock.advance(1000);
    assert.equal(f.host.toasts.filter((t) => /report-to session no longer exists/.test(t)).length, 1);
    const { automationTools } = await import("../../src/tools/build-tools.ts");
    const list = String(await automationTools(f.automations, () => {}).task_list!.execute({} as never, {} as never));
    assert.match(list, /enabled; report-to session gone/);
    f.catalog.update(a.id, { title: "renamed" });
    assert.equal(f.catalog.get(a.id)!.reportToGoneAt, undefined);
  });
});

describe("history and resuming", () => {
  it("raising max_runs on a done automation plans from now: the done time is not missed", async () => {
    const f = setup();
    const a = f.create({ maxRuns: 1, notify: "never" }, [{ every: "1s" }]);
    await f.clock.advance(1000);
    await finishAll(f, "one");
    await f.clock.advance(10_000);
    assert.ok(f.catalog.get(a.id)!.doneAt !== undefined);
    f.catalog.update(a.id, { maxRuns: 2 });
    await f.clock.advance(1000);
    assert.equal(f.children().length, 2);
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => r.status), ["running", "completed"]);
  });

  it("retention removes history rows older than retentionDays, hourly while the scheduler runs", async () => {
    const f = setup({ retentionDays: 1 });
    const a = f.create({ notify: "never" }, [{ every: "1h" }]);
    const hours = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await f.clock.advance(3600_000);
        await finishAll(f, "ok");
      }
    };
    await hours(24);
    assert.ok(f.autoStore.runs(a.id, 100).some((r) => r.runNo === 1), "a day old: kept");
    await hours(2);
    const left = f.autoStore.runs(a.id, 100).map((r) => r.runNo);
    assert.ok(!left.includes(1), "older than retentionDays: gone");
    assert.ok(left.includes(24), "newer runs stay");
  });
});

describe("the one timer", () => {
  it("an automation another process created (and then exited) is fired within a minute", async () => {
    const db = tempDb();
    after(() => db.cleanup());
    const idle = automationFixture(db.path);
    after(() => idle.close());
    idle.host.setActivity(PARENT, "idle");
    idle.runs.start();
    const creator = automationFixture(db.path);
    const a = creator.create({ notify: "never" }, [{ every: "30s" }]);
    creator.close();
    await idle.clock.advance(60_000);
    assert.equal(idle.children().length, 1);
    assert.equal(idle.autoStore.runs(a.id)[0]!.status, "running");
  });

  it("start after creating automations leaves exactly one timer, and a minute-long sleep wakes once", async () => {
    const db = tempDb();
    const f = automationFixture(db.path);
    after(() => { f.close(); db.cleanup(); });
    for (let i = 0; i < 5; i++) f.create({ notify: "never" }, [{ every: "1h" }]);
    f.runs.start();
    assert.equal(f.clock.pendingTimers(), 1);
    let wakes = 0;
    const wake = f.runs.scheduler.wake.bind(f.runs.scheduler);
    f.runs.scheduler.wake = () => { wakes++; wake(); };
    await f.clock.advance(60_000);
    assert.equal(wakes, 1);
    assert.equal(f.clock.pendingTimers(), 1);
  });
});

describe("runs nobody will end", () => {
  it("a run whose task settled where no listener heard it, and a launch cut off by a crash, do not block later firings", async () => {
    const f = setup();
    const a = f.create({ notify: "never" }, [{ every: "1m" }]);
    await f.clock.advance(60_000);
    const [child] = f.children();
    // Settle the task behind the automation layer's back (another process with automations off).
    const task = f.store.get(child!)!;
    f.store.save({ ...task, status: "completed", result: "done elsewhere", settledAt: f.clock.now() });
    await f.clock.advance(60_000);
    const runs = f.autoStore.runs(a.id);
    assert.deepEqual(runs.map((r) => [r.runNo, r.status]), [[2, "running"], [1, "completed"]]);
    assert.equal(runs[1]!.summary, "done elsewhere");
    // A claimed run whose process died before launching it.
    const stuck = f.autoStore.insertRun({ automationId: a.id, firedBy: "manual", status: "starting", runNo: 99, createdAt: f.clock.now(), startedAt: f.clock.now() })!;
    f.host.finishRun(f.children()[1]!, "ok");
    await f.flush();
    await f.clock.advance(3 * 60_000);
    assert.equal(f.autoStore.run(stuck.id)!.status, "error");
    assert.match(f.autoStore.run(stuck.id)!.summary!, /stopped before the run started/);
    assert.ok(f.autoStore.runs(a.id).some((r) => r.runNo === 3 && r.status === "running"), "fires again");
  });
});

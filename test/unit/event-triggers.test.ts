import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { parseTrigger, TriggerSpecError } from "../../src/automations/trigger-spec.ts";
import type { SourceLoaders } from "../../src/triggers/source-loaders.ts";
import type { SourceContext } from "../../src/triggers/trigger-source.ts";
import { TriggerRepository } from "../../src/store/trigger-repository.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { WebhookDeliveries, DELIVERY_TTL_MS } from "../../src/triggers/webhook-deliveries.ts";
import { LEASE_MS, TICK_MS } from "../../src/triggers/event-sources.ts";
import { MAX_SLEEP_MS } from "../../src/automations/automation-scheduler.ts";

const NOW = Date.parse("2026-11-26T12:00:00Z");

describe("event trigger objects", () => {
  it("parses the four event kinds with their defaults", () => {
    assert.deepEqual(parseTrigger({ watch: ["src/", "test/**/*.ts"] }, NOW), { kind: "watch", paths: ["src/", "test/**/*.ts"], ignore: [], debounce: "1s", debounceMs: 1000 });
    assert.deepEqual(parseTrigger({ command: "docker ps", diff: "full", timeout: "20s" }, NOW), {
      kind: "command", command: "docker ps", every: "30s", everyMs: 30_000, diff: "full", timeout: "20s", timeoutMs: 20_000,
    });
    assert.deepEqual(parseTrigger({ webhook: "deploy" }, NOW), { kind: "webhook", name: "deploy" });
    assert.deepEqual(parseTrigger({ github: "o/r", events: ["pr_opened", "ci_failed"], ref: "main" }, NOW), {
      kind: "github", repo: "o/r", events: ["pr_opened", "ci_failed"], every: "60s", everyMs: 60_000, ref: "main",
    });
    assert.equal(parseTrigger({ every: "30m" }, NOW).kind, "interval", "every alone is still an interval");
  });

  it("refuses two kinds or none with the shapes, and each bad field with its fix", () => {
    const refuse = (input: object, pattern: RegExp) => assert.throws(() => parseTrigger(input as never, NOW), (e: Error) => e instanceof TriggerSpecError && pattern.test(e.message));
    refuse({ watch: ["src/"], webhook: "x" }, /exactly one kind; got watch and webhook\. Shapes: .*"every".*"cron".*"watch".*"command".*"webhook".*"github"/);
    refuse({}, /exactly one kind; got none/);
    refuse({ every: "1m", webhook: "x" }, /exactly one kind; got every and webhook/);
    refuse({ watch: ["src/"], diff: "full" }, /"diff" does not go with "watch" \(it goes with "command"\)/);
    refuse({ watch: [] }, /at least one path/);
    refuse({ watch: ["/etc/"] }, /relative to the project/);
    refuse({ command: "ls", every: "500ms" }, /"every": "500ms" is shorter than the minimum of 1s/);
    refuse({ command: "ls", diff: "lines" }, /"diff": "lines" must be one of hash, full, exit_code/);
    refuse({ webhook: "no spaces" }, /letters, digits/);
    refuse({ github: "o/r", events: ["pr_opened", "star"] }, /unknown "star"; choose from push, pr_opened/);
    refuse({ github: "nope", events: ["push"] }, /"owner\/repo", or "\."/);
  });
});

/** Loaders whose sources only record their context, so a test can emit events through them. */
function recordingLoaders() {
  const started: { spec: unknown; ctx: SourceContext; stopped: boolean }[] = [];
  const calls: string[] = [];
  const fake = (kind: string) => async () => {
    calls.push(kind);
    return async (spec: unknown, ctx: SourceContext) => {
      const entry = { spec, ctx, stopped: false };
      started.push(entry);
      return { stop: () => void (entry.stopped = true) };
    };
  };
  const loaders = { watch: fake("watch"), command: fake("command"), github: fake("github"), webhookListener: fake("webhookListener") } as unknown as SourceLoaders;
  return { loaders, started, calls, live: () => started.filter((s) => !s.stopped) };
}

function setup(dbPath?: string) {
  const db = dbPath ? { path: dbPath, cleanup: () => {} } : tempDb();
  const rec = recordingLoaders();
  const f = automationFixture(db.path, {}, { loaders: rec.loaders });
  after(() => { f.close(); db.cleanup(); });
  f.host.setActivity(PARENT, "idle");
  f.runs.start();
  return { ...f, ...rec, dbPath: db.path };
}

async function finishAll(f: ReturnType<typeof setup>, text: string) {
  for (const id of f.children()) if (["running", "resumed"].includes(f.manager.get(id)!.status)) f.host.finishRun(id, text);
  await f.flush();
  f.host.setActivity(PARENT, "idle");
}

describe("firing event triggers", () => {
  it("loads nothing and holds no timer while the project has no event trigger", async () => {
    const f = setup();
    const timers = f.clock.pendingTimers();
    f.create({}, [{ every: "1h" }]);
    await f.clock.advance(TICK_MS * 3);
    assert.deepEqual(f.calls, []);
    assert.equal(f.clock.pendingTimers(), timers, "only the scheduler's timer");
  });

  it("an event starts a run whose prompt carries the event; events during the run fold into one waiting run", async () => {
    const f = setup();
    const a = f.create({ overlap: "queue" }, [{ watch: ["src/"] }]);
    await f.flush();
    assert.deepEqual(f.calls, ["watch"]);
    const source = f.live()[0]!;
    source.ctx.emit({ summary: "src/a.ts changed", data: "src/a.ts" });
    await f.flush();
    assert.equal(f.children().length, 1);
    const prompt = f.host.promptsTo(f.children()[0]!)[0]!.text;
    assert.match(prompt, /^\[Automation "check ci" \(au\w+\), run #1, fired by when src\/ change\]\n\[Event: src\/a\.ts changed\]\nsrc\/a\.ts\n\nlook at CI$/);
    for (const n of [1, 2, 3]) source.ctx.emit({ summary: `burst ${n}`, data: "token=abcdefghijkl1234" });
    await f.flush();
    const rows = f.autoStore.runs(a.id);
    assert.deepEqual(rows.map((r) => r.status), ["waiting", "running"], "three events, one waiting row");
    assert.equal(rows[0]!.eventSummary, "burst 3");
    assert.equal(rows[0]!.eventFolded, 2);
    assert.equal(rows[0]!.eventData, "token=[MASKED]", "secrets masked before they are stored");
    await finishAll(f, "done");
    assert.equal(f.children().length, 2);
    assert.match(f.host.promptsTo(f.children()[1]!)[0]!.text, /\[Event: burst 3 \(2 earlier event\(s\) arrived while a run was going and were folded into this one\)\]/);
    assert.equal(f.autoStore.runs(a.id)[0]!.firedBy, "watch");
  });

  it("overlap skip records one skipped row per running run, counting the events", async () => {
    const f = setup();
    const a = f.create({}, [{ command: "make check" }]);
    await f.flush();
    const source = f.live()[0]!;
    for (const n of [1, 2, 3, 4]) source.ctx.emit({ summary: `change ${n}` });
    await f.flush();
    const rows = f.autoStore.runs(a.id);
    assert.deepEqual(rows.map((r) => `${r.status}:${r.skipCount ?? 1}`), ["skipped:3", "running:1"]);
    assert.equal(rows[0]!.eventSummary, "change 4", "the streak holds the newest event");
    assert.equal(f.children().length, 1);
  });

  it("pausing, deleting and max_runs stop the source", async () => {
    const f = setup();
    const a = f.create({ maxRuns: 1 }, [{ github: "o/r", events: ["push"] }]);
    const b = f.create({}, [{ watch: ["docs/"] }]);
    await f.flush();
    assert.equal(f.live().length, 2);
    f.live().find((s) => (s.spec as { kind: string }).kind === "github")!.ctx.emit({ summary: "push to main" });
    await f.flush();
    assert.ok(f.catalog.get(a.id)!.doneAt !== undefined);
    assert.deepEqual(f.live().map((s) => (s.spec as { kind: string }).kind), ["watch"], "max_runs reached: the poller stopped");
    f.catalog.update(b.id, { enabled: false });
    await f.flush();
    assert.equal(f.live().length, 0, "paused: the watcher closed");
    f.catalog.update(b.id, { enabled: true });
    await f.flush();
    assert.equal(f.live().length, 1);
    f.catalog.delete(b.id);
    await f.flush();
    assert.equal(f.live().length, 0);
  });

  it("two processes on one database: one runs the source; the other takes over when the lease runs out", async () => {
    const one = setup();
    const two = setup(one.dbPath);
    one.create({}, [{ watch: ["src/"] }]);
    await one.flush();
    two.runs.sources!.sync();
    await two.flush();
    assert.equal(one.live().length, 1);
    assert.equal(two.live().length, 0, "the lease is held by the first");
    await one.runs.sources!.stop(); // gives the lease back
    await two.clock.advance(TICK_MS);
    assert.equal(two.live().length, 1, "taken over at the next tick");
    // A holder that stops renewing (hung, or on a clock that froze) loses the lease after LEASE_MS.
    const three = setup(one.dbPath);
    three.runs.sources!.sync();
    await three.flush();
    assert.equal(three.live().length, 0);
    three.clock.jump(LEASE_MS + 1);
    await three.clock.advance(TICK_MS);
    assert.equal(three.live().length, 1);
  });
});

describe("event triggers added by another process", () => {
  it("a process that had no event trigger finds them at its scheduler's next wake and takes over a dead holder's", async () => {
    const one = setup();
    const two = setup(one.dbPath);
    one.create({}, [{ watch: ["src/"] }]);
    await one.flush();
    await one.clock.advance(MAX_SLEEP_MS); // the first keeps renewing its lease meanwhile
    await two.clock.advance(MAX_SLEEP_MS);
    assert.deepEqual(two.calls, [], "the lease is held by the first; nothing loaded here");
    await one.runs.sources!.stop(); // as if it died: the lease is free
    await two.clock.advance(TICK_MS);
    assert.equal(two.live().length, 1, "taken over at the next tick");
  });
});

describe("webhook deliveries", () => {
  it("a delivery is stored, fired once, and a replay of its id runs nothing", async () => {
    const f = setup();
    const a = f.create({}, [{ webhook: "deploy" }]);
    await f.flush();
    const deliveries = f.runs.sources!.deliveries;
    assert.deepEqual(deliveries.secretOf("deploy"), { secret: "s3cret-s3cret-s3cret" });
    assert.equal(deliveries.secretOf("nope"), undefined);
    const first = deliveries.accept({ name: "deploy", deliveryId: "d-1", githubEvent: "push", body: '{"ref":"main"}' });
    assert.equal(first.status, 202);
    assert.equal(typeof (first as { runId: unknown }).runId, "number");
    assert.deepEqual(deliveries.accept({ name: "deploy", deliveryId: "d-1", body: "{}" }), { status: 200, duplicate: true });
    await f.flush();
    assert.equal(f.children().length, 1);
    // Firing re-syncs the sources, which looks for unfired deliveries again while this one's run launches: it is not fired twice.
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => [r.status, r.eventFolded ?? 0]), [["running", 0]]);
    // A second delivery while the first one's run goes is its one skipped row (overlap: skip), counting no other event.
    deliveries.accept({ name: "deploy", deliveryId: "d-2", body: "{}" });
    await f.flush();
    assert.deepEqual(f.autoStore.runs(a.id).map((r) => [r.status, r.skipCount ?? 1]), [["skipped", 1], ["running", 1]]);
    assert.match(f.host.promptsTo(f.children()[0]!)[0]!.text, /\[Event: POST \/hooks\/deploy \(push\)\]\n\{"ref":"main"\}/);
    f.catalog.update(a.id, { enabled: false });
    assert.equal(deliveries.secretOf("deploy"), undefined, "paused: the route answers 401, as an unknown name");
  });

  it("the same signed content under three different or missing delivery ids is stored and run once, also from another connection", async () => {
    const f = setup();
    const a = f.create({}, [{ webhook: "deploy" }]);
    await f.flush();
    const deliveries = f.runs.sources!.deliveries;
    const same = { name: "deploy", githubEvent: "push", body: '{"ref":"main"}', contentKey: "a".repeat(64) };
    assert.equal(deliveries.accept({ ...same, deliveryId: "d-1" }).status, 202);
    assert.deepEqual(deliveries.accept({ ...same, deliveryId: "d-2" }), { status: 200, duplicate: true });
    assert.deepEqual(deliveries.accept({ ...same }), { status: 200, duplicate: true });
    // Another OpenCode process on the same database file: its own connection.
    const conn = openSqlite(f.dbPath);
    after(() => conn.close());
    const other = new WebhookDeliveries({
      store: new TriggerRepository(conn, "proj"), clock: f.clock, holder: "pid2-y",
      fire: () => assert.fail("a duplicate must not fire"), recordSkip: () => {}, abandonRun: () => {},
    });
    assert.deepEqual(other.accept({ ...same, deliveryId: "d-3" }), { status: 200, duplicate: true });
    // The listener asks this before the hook's rate limit (issue 33): by id, or by content under any id.
    assert.deepEqual([other.seen({ name: "deploy", deliveryId: "d-1" }), other.seen({ ...same, deliveryId: "new" }), other.seen({ name: "deploy", deliveryId: "new", contentKey: "c".repeat(64) }), other.seen({ name: "nope", deliveryId: "d-1" })], [true, true, false, false]);
    assert.equal(deliveries.accept({ ...same, deliveryId: "d-4", contentKey: "b".repeat(64) }).status, 202, "other content runs");
    await f.flush();
    assert.equal(f.autoStore.runs(a.id).length, 2);
    assert.equal(conn.prepare("SELECT count(*) AS n FROM webhook_deliveries").get()!.n, 2);
  });

  it("a delivery taken by another project's listener waits for this project's process; old ones expire", async () => {
    const f = setup();
    const a = f.create({}, [{ webhook: "ci" }]);
    await f.flush();
    const elsewhere = new WebhookDeliveries({
      store: new TriggerRepository(openSame(f), "another-project"), clock: f.clock, holder: "pid1-x",
      fire: () => assert.fail("another project's process must not fire it"), recordSkip: () => {}, abandonRun: () => {},
    });
    assert.deepEqual(elsewhere.accept({ name: "ci", deliveryId: "x1", body: "one" }), { status: 202, runId: "queued", note: "fired by an OpenCode process of its project" });
    assert.equal(f.children().length, 0);
    await f.clock.advance(TICK_MS);
    assert.equal(f.children().length, 1, "fired at this project's next tick");
    await finishAll(f, "ok");
    elsewhere.accept({ name: "ci", deliveryId: "x2", body: "two" });
    f.clock.jump(DELIVERY_TTL_MS + 1000);
    await f.clock.advance(TICK_MS);
    assert.equal(f.children().length, 1, "older than 24 h: not run");
    assert.match(f.autoStore.runs(a.id)[0]!.skipReason ?? "", /^expired/);
  });
});

/** The fixture's own connection: TriggerRepository only needs the database. */
function openSame(f: ReturnType<typeof setup>) {
  return (f.autoStore as unknown as { db: ConstructorParameters<typeof TriggerRepository>[0] }).db;
}

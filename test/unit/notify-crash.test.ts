import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock, flush } from "../helpers/fake-clock.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { ParentNotifier } from "../../src/core/parent-notifier.ts";
import { CLAIM_LEASE_MS, newClaimer } from "../../src/core/claims.ts";
import { withMarker } from "../../src/core/notification-text.ts";
import type { TaskStore } from "../../src/core/task-store.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { withCrashFault } from "../../src/host/crash-fault-host.ts";

const DEAD_PID = 2 ** 22 + 7; // above Linux's largest pid_max: no such process
const deadClaimer = `${hostname()}:${DEAD_PID}:gone`;
const liveClaimer = newClaimer(); // another live instance in this very process (an unknown nonce of our pid is a gone process)

function notifierFixture(store: TaskStore = new MemoryTaskStore(), claimer = "me") {
  const clock = new FakeClock();
  const host = new FakeHost(clock);
  host.addSession(PARENT, "idle");
  const errors: string[] = [];
  const notifier = new ParentNotifier({
    host, store, clock, resultCap: 1000, claimer,
    onError: (message) => errors.push(message),
  });
  const enqueue = (id: string, text = `<background-task-notification task_id="ses_t">${id} done</background-task-notification>`) =>
    store.enqueueNotification({ id, parentSessionID: PARENT, taskId: "ses_t", text, wake: false, createdAt: clock.now() });
  const sent = () => host.promptsTo(PARENT).map((p) => p.text);
  return { clock, host, store, notifier, errors, enqueue, sent };
}

describe("notification marker", () => {
  it("goes on the notification's own tag, once, and wraps a text that has none", () => {
    const text = '<background-task-notification task_id="ses_a" status="completed">\nok\n</background-task-notification>';
    const marked = withMarker(text, "ses_a:2");
    assert.equal(marked, '<background-task-notification key="ses_a:2" task_id="ses_a" status="completed">\nok\n</background-task-notification>');
    assert.equal(withMarker(marked, "ses_a:2"), marked);
    assert.equal(withMarker("plain", 'auto_"x"'), '<background-task-notification key="auto_&quot;x&quot;">\nplain\n</background-task-notification>');
  });

  it("a settle notification carries task id and settle number", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(id, "found it");
    await f.flush();
    const [note] = f.host.promptsTo(PARENT);
    assert.ok(note?.text.includes(`<background-task-notification key="${id}:0" task_id="${id}"`), note?.text);
  });
});

describe("crash-safe outbox", () => {
  it("batched notifications each carry their marker; fresh ones go out without reading the parent", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.enqueue("auto_d1_1", "run 1 of automation d1 finished");
    await f.notifier.deliver(PARENT);
    assert.equal(f.sent().length, 1);
    assert.match(f.sent()[0], /key="ses_t:0".*\n[^]*key="auto_d1_1"/);
    assert.equal(f.host.messageCalls, 0);
    assert.deepEqual(f.store.pendingNotifications(), []);
    assert.deepEqual(f.store.events("ses_t").map((e) => e.detail), ["no turn", "no turn"]);
  });

  it("a claim left by a dead process is taken over at once: sent when the parent does not have it", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.store.claimNotification("ses_t:0", deadClaimer, f.clock.now());
    await f.notifier.deliver(PARENT);
    assert.equal(f.sent().length, 1);
    assert.match(f.sent()[0], /key="ses_t:0"/);
    assert.equal(f.host.messageCalls, 1, "the parent was searched first");
    assert.deepEqual(f.store.pendingNotifications(), []);
  });

  it("a claimed notification already in the parent is confirmed without sending it again", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.enqueue("ses_t:1");
    f.store.claimNotification("ses_t:0", deadClaimer, f.clock.now());
    f.store.claimNotification("ses_t:1", deadClaimer, f.clock.now());
    // The dead process got its prompt out (with one marker) but died before confirming.
    await f.host.prompt({ sessionID: PARENT, text: withMarker("<background-task-notification>x", "ses_t:0"), agent: "build", noReply: true });
    f.host.prompts = [];
    await f.notifier.deliver(PARENT);
    assert.equal(f.sent().length, 1);
    assert.ok(f.sent()[0].includes('key="ses_t:1"') && !f.sent()[0].includes('key="ses_t:0"'), f.sent()[0]);
    assert.deepEqual(f.store.pendingNotifications(), []);
    assert.deepEqual(f.store.events("ses_t").map((e) => e.detail), ["found in the parent, not sent again", "no turn"]);
  });

  it("finds a marker far back in a long parent history", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.store.claimNotification("ses_t:0", deadClaimer, f.clock.now());
    await f.host.prompt({ sessionID: PARENT, text: withMarker("<background-task-notification>x", "ses_t:0"), agent: "build", noReply: true });
    for (let i = 0; i < 150; i++) {
      await f.clock.advance(10);
      f.host.finishRun(PARENT, `step ${i}`, { emitIdle: false });
    }
    f.host.prompts = [];
    await f.notifier.deliver(PARENT);
    assert.deepEqual(f.sent(), []);
    assert.ok(f.host.messageCalls > 1, "read further back than the first page");
    assert.deepEqual(f.store.pendingNotifications(), []);
  });

  it("a live claim by another instance is left alone until its lease runs out", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.store.claimNotification("ses_t:0", liveClaimer, f.clock.now());
    await f.notifier.deliver(PARENT);
    assert.deepEqual(f.sent(), []);
    await f.clock.advance(CLAIM_LEASE_MS);
    await f.notifier.deliver(PARENT);
    assert.equal(f.sent().length, 1);
    assert.equal(f.host.messageCalls, 1);
  });

  it("a refused prompt releases the claim; the retry checks the parent and sends once", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.host.failPrompt = true;
    await f.notifier.deliver(PARENT);
    assert.equal(f.errors.length, 1);
    const [waiting] = f.store.pendingNotifications();
    assert.equal(waiting?.claim, undefined, "released");
    assert.equal(waiting?.claims, 1);
    f.host.failPrompt = false;
    await f.notifier.deliver(PARENT);
    assert.equal(f.sent().length, 1);
    assert.equal(f.host.messageCalls, 1);
    assert.deepEqual(f.store.pendingNotifications(), []);
  });

  it("a failure reading the parent releases the claim and sends nothing", async () => {
    const f = notifierFixture();
    f.enqueue("ses_t:0");
    f.store.claimNotification("ses_t:0", deadClaimer, f.clock.now());
    f.host.recentMessages = async () => {
      throw new Error("host down");
    };
    await f.notifier.deliver(PARENT);
    assert.deepEqual(f.sent(), []);
    assert.equal(f.store.pendingNotifications()[0]?.claim, undefined);
    assert.equal(f.errors.length, 1);
  });
});

describe("crash-safe outbox on one database shared by two instances", () => {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-outbox-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("two instances delivering at once send each notification once", async () => {
    const path = join(dir, "two.db");
    const a = notifierFixture(SqliteTaskStore.open({ path, projectId: "p" }), "a");
    const b = new ParentNotifier({
      host: a.host, store: SqliteTaskStore.open({ path, projectId: "p" }), clock: a.clock, resultCap: 1000, claimer: "b", onError: () => undefined,
    });
    a.enqueue("ses_t:0");
    a.enqueue("ses_t:1");
    await Promise.all([a.notifier.deliver(PARENT), b.deliver(PARENT)]);
    await flush();
    const all = a.sent().join("\n");
    assert.equal(all.match(/key="ses_t:0"/g)?.length, 1);
    assert.equal(all.match(/key="ses_t:1"/g)?.length, 1);
    assert.deepEqual(a.store.pendingNotifications(), []);
  });
});

describe("test-only crash points (OPENCODE_ERRANDS_FAULT), in the host adapter", () => {
  /** A notifier on a host armed with `fault`, where dying is only recorded. */
  function armed(fault: string) {
    const f = notifierFixture();
    const deaths: number[] = [];
    const notifier = new ParentNotifier({
      host: withCrashFault(f.host, fault, (afterMs) => deaths.push(afterMs)), store: f.store, clock: f.clock, resultCap: 1000, claimer: "me",
      onError: (message) => f.errors.push(message),
    });
    f.enqueue("ses_t:0");
    void notifier.deliver(PARENT); // never settles once the crash point is reached, as a killed process
    return { ...f, deaths };
  }

  it("exit-after-claim: dies with the claim committed and nothing sent", async () => {
    const f = armed("exit-after-claim");
    await flush();
    assert.deepEqual(f.deaths, [0]);
    assert.deepEqual(f.sent(), []);
    assert.equal(f.store.pendingNotifications()[0]?.claim?.by, "me");
  });

  it("exit-after-send: dies after the host accepted the notification, before it is confirmed", async () => {
    const f = armed("exit-after-send");
    await flush();
    assert.deepEqual(f.deaths, [1000]);
    assert.equal(f.sent().length, 1);
    assert.equal(f.store.pendingNotifications()[0]?.claim?.by, "me", "still pending (unconfirmed) and claimed");
  });

  it("other prompts pass, and without a known fault the host is the same object", async () => {
    const f = notifierFixture();
    const deaths: number[] = [];
    const host = withCrashFault(f.host, "exit-after-claim", (ms) => deaths.push(ms));
    await host.prompt({ sessionID: PARENT, text: "a child's task prompt", agent: "general" });
    assert.equal(f.sent().length, 1);
    assert.deepEqual(deaths, []);
    assert.equal(withCrashFault(f.host, undefined), f.host);
    assert.equal(withCrashFault(f.host, "exit-later"), f.host);
  });
});

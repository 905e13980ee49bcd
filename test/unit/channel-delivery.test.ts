import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { ChannelDelivery, type ChannelDeliveryOptions } from "../../src/channels/channel-delivery.ts";
import type { Channels } from "../../src/channels/channel-config.ts";
import type { ChannelNotice } from "../../src/channels/channel-message.ts";
import { deliveryStatusText } from "../../src/channels/channel-queue.ts";
import { newClaimer } from "../../src/core/claims.ts";
import { ChannelOutboxRepository, type ChannelDeliveryStatus } from "../../src/store/channel-outbox-repository.ts";
import { LeasedOutbox } from "../../src/store/leased-outbox.ts";
import { systemClock } from "../../src/core/clock.ts";
import { migrate } from "../../src/store/migrations.ts";
import { openSqlite, type SqliteDatabase } from "../../src/store/sqlite-driver.ts";
import { verifyWebhookSignature } from "../../src/triggers/webhook-signature.ts";
import { startReceiver, type Receiver } from "../helpers/channel-receiver.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/** Every channel URL's path holds this: it must never show up outside the options. */
const HIDDEN = "T0PSECRETPATH";
const DAY = 86_400_000;

const dir = mkdtempSync(join(tmpdir(), "ocbt-channels-"));
const logs: string[] = [];
const shown: ChannelDeliveryStatus[] = [];
const cleanups: (() => unknown)[] = [];
let dbNo = 0;
let runNo = 0;

after(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function openDb(path = join(dir, `db${++dbNo}.db`)): SqliteDatabase {
  const db = openSqlite(path);
  migrate(db);
  cleanups.push(() => db.close());
  return db;
}

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  cleanups.push(() => r.close());
  return r;
}

function channelsOn(r: Receiver): Channels {
  return {
    bot: { url: r.url(`/json/${HIDDEN}`), format: "json", secret: SECRET },
    team: { url: r.url(`/services/${HIDDEN}`), format: "slack" },
    ops: { url: r.url(`/api/webhooks/1/${HIDDEN}`), format: "discord" },
    phone: { url: r.url(`/${HIDDEN}-topic`), format: "ntfy" },
  };
}

function makeDelivery(db: SqliteDatabase, channels: Channels, over: Partial<ChannelDeliveryOptions> = {}): ChannelDelivery {
  const d = new ChannelDelivery({ outbox: new ChannelOutboxRepository(db, "p", newClaimer()), channels, log: (m) => logs.push(m), onEnded: (s) => shown.push(s), ...over });
  cleanups.push(() => d.stop());
  return d;
}

function notice(over: Partial<ChannelNotice> = {}): ChannelNotice {
  const no = ++runNo;
  return {
    automation: { id: "auto_1", title: "Nightly tests" }, run: { no, id: 1000 + no }, status: "completed",
    trigger: "interval every 1h", summary: "all pass", result: "all pass", taskId: "ses_1", ...over,
  };
}

/** Fires due timers at the current fake time and waits for the attempts they started. */
async function settle(clock: FakeClock, ...deliveries: ChannelDelivery[]): Promise<void> {
  await clock.advance(0);
  await Promise.all(deliveries.map((d) => d.idle()));
}

async function advance(clock: FakeClock, ms: number, ...deliveries: ChannelDelivery[]): Promise<void> {
  await clock.advance(ms);
  await Promise.all(deliveries.map((d) => d.idle()));
}

describe("channel delivery", { timeout: 120_000 }, () => {
  it("delivers one run to each of the four formats once, the json one signed", async () => {
    const r = await receiver();
    const clock = new FakeClock();
    const db = openDb();
    const d = makeDelivery(db, channelsOn(r), { clock });
    d.start();
    const n = notice({ status: "error", summary: "2 tests fail", result: "2 tests fail: a, b", dashboardUrl: "http://127.0.0.1:4321/run?id=1" });
    db.transaction(() => d.enqueue(n, ["bot", "team", "ops", "phone"]));
    await settle(clock, d);
    const sentAt = clock.now();
    await advance(clock, 3_600_000, d);
    assert.equal(r.received.length, 4);
    const by = (prefix: string) => r.received.find((x) => x.path.startsWith(prefix))!;

    const json = by("/json/");
    assert.deepEqual(verifyWebhookSignature(SECRET, json.headers, json.body, sentAt), { ok: true, deliveryId: json.headers["idempotency-key"] as string });
    assert.deepEqual(JSON.parse(json.body), {
      type: "automation.run", automation: n.automation, run: n.run, status: "error", trigger: n.trigger, summary: n.summary, result: n.result,
      branch: null, taskId: "ses_1", dashboardUrl: n.dashboardUrl,
    });
    const slack = JSON.parse(by("/services/").body);
    assert.equal(slack.text, "❌ Nightly tests run #" + n.run.no + " failed: 2 tests fail");
    assert.equal(slack.blocks[0].type, "section");
    const discord = JSON.parse(by("/api/webhooks/").body);
    assert.match(discord.content, /^❌ \*\*Nightly tests\*\* run #\d+ failed \(interval every 1h\)\n2 tests fail: a, b\n<http:/);
    const ntfy = by(`/${HIDDEN}-topic`);
    assert.equal(ntfy.body, "2 tests fail: a, b\n\ninterval every 1h");
    assert.equal(ntfy.headers.priority, "high");
    assert.equal(ntfy.headers.title, `Nightly tests run #${n.run.no} failed`);
    assert.equal(ntfy.headers.click, n.dashboardUrl);

    const keys = r.received.map((x) => x.headers["idempotency-key"]);
    assert.equal(new Set(keys).size, 4);
    assert.deepEqual(d.status(n.run.id).map((s) => [s.channel, s.host, s.status, s.attempts]), [
      ["bot", `127.0.0.1:${r.port}`, "delivered", 1], ["ops", `127.0.0.1:${r.port}`, "delivered", 1],
      ["phone", `127.0.0.1:${r.port}`, "delivered", 1], ["team", `127.0.0.1:${r.port}`, "delivered", 1],
    ]);
    shown.push(...d.status(n.run.id));
  });

  it("the receiver down for 3 attempts, then up: delivered once, after the backoff, with the same key", async () => {
    const r = await receiver();
    await r.down();
    const clock = new FakeClock();
    const db = openDb();
    const d = makeDelivery(db, channelsOn(r), { clock });
    d.start();
    const n = notice();
    db.transaction(() => d.enqueue(n, ["bot"]));
    await settle(clock, d); // attempt 1
    await advance(clock, 5000, d); // attempt 2
    await advance(clock, 10_000, d); // attempt 3
    const [pending] = d.status(n.run.id);
    assert.equal(pending.status, "pending");
    assert.equal(pending.attempts, 3);
    assert.match(pending.lastError!, /^network error \((ECONNREFUSED|ConnectionRefused)\)$/); // Node | Bun
    assert.equal(pending.nextAttemptAt, clock.now() + 20_000);
    shown.push(pending);
    await r.up();
    await advance(clock, 19_999, d);
    assert.equal(r.received.length, 0, "no attempt before the backoff is over");
    await advance(clock, 1, d); // attempt 4
    await advance(clock, 3_600_000, d);
    assert.equal(r.received.length, 1);
    assert.deepEqual(d.status(n.run.id).map((s) => [s.status, s.attempts]), [["delivered", 4]]);
    assert.match(deliveryStatusText(d.status(n.run.id)[0], clock.now()), /^bot \(127\.0\.0\.1:\d+\): delivered after 4 attempts$/);
  });

  it("waits out a 429's Retry-After: no attempt before it", async () => {
    const r = await receiver((_, i) => (i === 0 ? { status: 429, headers: { "Retry-After": "120" } } : { status: 200 }));
    const clock = new FakeClock();
    const db = openDb();
    const d = makeDelivery(db, channelsOn(r), { clock });
    d.start();
    const n = notice();
    db.transaction(() => d.enqueue(n, ["team"]));
    await settle(clock, d);
    assert.equal(r.received.length, 1);
    assert.equal(d.status(n.run.id)[0].lastError, "HTTP 429, Retry-After 120 s");
    await advance(clock, 119_999, d);
    assert.equal(r.received.length, 1, "nothing before Retry-After (the backoff alone would have tried at 5 s)");
    await advance(clock, 1, d);
    assert.equal(r.received.length, 2);
    assert.equal(r.received[0].headers["idempotency-key"], r.received[1].headers["idempotency-key"]);
    assert.equal(d.status(n.run.id)[0].status, "delivered");
  });

  it("gives up after 24 h of failures, records it as failed with the reason, and tries no more", async () => {
    const r = await receiver(() => ({ status: 500 }));
    const clock = new FakeClock();
    const db = openDb();
    const d = makeDelivery(db, channelsOn(r), { clock });
    d.start();
    const n = notice();
    const created = clock.now();
    db.transaction(() => d.enqueue(n, ["phone"]));
    await settle(clock, d);
    for (let i = 0; i < 200 && d.status(n.run.id)[0].status === "pending"; i++) {
      await advance(clock, d.status(n.run.id)[0].nextAttemptAt! - clock.now(), d);
    }
    const [failed] = d.status(n.run.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.endedAt, created + DAY, "the last try falls at the end of the window");
    assert.equal(failed.attempts, r.received.length);
    assert.ok(failed.attempts > 40 && failed.attempts < 70, String(failed.attempts));
    assert.equal(failed.lastError, `gave up after ${failed.attempts} attempts over 24 h; last: HTTP 500`);
    assert.deepEqual(shown.at(-1), failed, "onEnded heard it");
    assert.deepEqual(d.outbox.failures(created).map((s) => s.runId), [n.run.id]);
    assert.ok(logs.some((m) => m === `Channel phone (127.0.0.1:${r.port}): gave up on run #${n.run.no} of "Nightly tests": ${failed.lastError}`));
    await advance(clock, 7 * DAY, d);
    assert.equal(r.received.length, failed.attempts);
  });

  it("gives up at once on a 404, and records a channel the options no longer hold as failed", async () => {
    const r = await receiver(() => ({ status: 404 }));
    const clock = new FakeClock();
    const db = openDb();
    const d = makeDelivery(db, channelsOn(r), { clock });
    d.start();
    const n = notice();
    db.transaction(() => d.enqueue(n, ["ops", "gone", "ops"]));
    await settle(clock, d);
    await advance(clock, DAY, d);
    assert.equal(r.received.length, 1);
    const [gone, ops] = d.status(n.run.id);
    assert.deepEqual([gone.channel, gone.status, gone.attempts, gone.lastError], ["gone", "failed", 0, 'channel "gone" is not configured (configured: bot, team, ops, phone)']);
    assert.deepEqual([ops.status, ops.attempts, ops.lastError], ["failed", 1, "HTTP 404, not retried: check the channel's URL and format in the options"]);
    db.transaction(() => d.enqueue(n, ["ops"])); // the same run again: nothing new
    await advance(clock, 60_000, d);
    assert.equal(r.received.length, 1);
    shown.push(gone, ops);
  });

  it("two instances on one database file send each notification once", { timeout: 20_000 }, async () => {
    const r = await receiver();
    const path = join(dir, "shared.db");
    const [dbA, dbB] = [openDb(path), openDb(path)];
    const channels = channelsOn(r);
    const a = makeDelivery(dbA, channels, { clock: systemClock });
    const b = makeDelivery(dbB, channels, { clock: systemClock });
    a.start();
    b.start();
    const notices = Array.from({ length: 30 }, () => notice());
    notices.forEach((n, i) => (i % 2 ? dbA : dbB).transaction(() => (i % 2 ? a : b).enqueue(n, ["bot", "phone"])));
    await r.waitFor(60);
    // Once every row is recorded delivered and both are idle, a duplicate would have been sent.
    await waitFor(() => notices.every((n) => a.status(n.run.id).every((s) => s.status === "delivered")), "every delivery recorded");
    await Promise.all([a.idle(), b.idle()]);
    const keys = r.received.map((x) => String(x.headers["idempotency-key"]));
    assert.equal(keys.length, 60);
    assert.equal(new Set(keys).size, 60);
    for (const n of notices) assert.deepEqual(a.status(n.run.id).map((s) => s.status), ["delivered", "delivered"]);
  });

  it("a claim of a live other instance is waited out for its lease; a dead process's is taken over at once", async () => {
    const r = await receiver();
    const clock = new FakeClock();
    const db = openDb();
    const d = makeDelivery(db, channelsOn(r), { clock });
    const [slow, dead] = [notice(), notice()];
    db.transaction(() => {
      d.enqueue(slow, ["bot"]);
      d.enqueue(dead, ["team"]);
    });
    const deadPid = spawnSync("true").pid!;
    new LeasedOutbox(db, "channel_deliveries", "p", newClaimer() /* a live instance of this process */).claim(clock.now(), 1, (i) => i.row.channel === "bot");
    new LeasedOutbox(db, "channel_deliveries", "p", `${hostname()}:${deadPid}:crashed`).claim(clock.now(), 1, (i) => i.row.channel === "team");
    d.start();
    await settle(clock, d);
    assert.deepEqual(r.received.map((x) => x.path), [`/services/${HIDDEN}`], "the dead process's claim is taken over");
    await advance(clock, 29_999, d);
    assert.equal(r.received.length, 1, "the live claim holds for its lease");
    await advance(clock, 1, d);
    assert.equal(r.received.length, 2);
    assert.deepEqual([...d.status(slow.run.id), ...d.status(dead.run.id)].map((s) => [s.status, s.attempts]), [["delivered", 2], ["delivered", 2]]);
  });

  it("an overtaken claimer can neither confirm nor reschedule what its successor holds", () => {
    const db = openDb();
    const d = makeDelivery(db, {}, {});
    db.transaction(() => d.enqueue(notice(), ["x"]));
    db.prepare("UPDATE channel_deliveries SET status = 'pending', ended_at = NULL, next_attempt_at = 0").run();
    const first = new LeasedOutbox(db, "channel_deliveries", "p", newClaimer());
    const second = new LeasedOutbox(db, "channel_deliveries", "p", newClaimer());
    const [item] = first.claim(1000, 5, () => true);
    assert.equal(second.claim(1000 + 29_999, 5, () => true).length, 0);
    assert.equal(second.claim(1000 + 30_000, 5, () => true)[0].id, item.id);
    assert.equal(first.confirm(item.id, 40_000), false);
    assert.equal(first.retryAt(item.id, 50_000, "late"), false);
    assert.equal(second.confirm(item.id, 40_000), true);
  });

  it("never throws into the run's transaction, and sets no fast timer when nothing is due or every slot is busy", { timeout: 20_000 }, async () => {
    const broken = openSqlite(join(dir, "unmigrated.db"));
    cleanups.push(() => broken.close());
    const clock = new FakeClock();
    const d = makeDelivery(broken, { bot: { url: `http://127.0.0.1:9/${HIDDEN}`, format: "json" } }, { clock });
    assert.doesNotThrow(() => broken.transaction(() => d.enqueue(notice(), ["bot"])));
    assert.match(logs.at(-1)!, /^Could not queue run #\d+ of "Nightly tests" for channels bot: SqliteError/i);

    let timers = 0;
    const counting = new FakeClock();
    const setTimeoutOf = counting.setTimeout.bind(counting);
    counting.setTimeout = (fn, ms) => (timers++, setTimeoutOf(fn, ms));
    const idle = makeDelivery(openDb(), {}, { clock: counting });
    idle.start();
    await counting.advance(10 * 60_000);
    assert.ok(timers <= 12, `${timers} timers in 10 minutes`);
    assert.equal(counting.pendingTimers(), 1);
    idle.stop();
    // Every slot busy with a hanging receiver, more due: waits for a slot, does not spin.
    const r = await receiver(() => ({ status: 200, hang: true }));
    const db = openDb();
    const busy = makeDelivery(db, channelsOn(r), { clock: counting, maxInFlight: 1, timeoutMs: 60_000 });
    busy.start();
    db.transaction(() => busy.enqueue(notice(), ["bot", "team", "ops"]));
    timers = 0;
    await counting.advance(0);
    await r.waitFor(1);
    await counting.advance(10 * 60_000);
    assert.equal(r.received.length, 1);
    assert.ok(timers <= 12, `${timers} timers in 10 minutes with every slot busy`);
  });

  it("stop cuts off an attempt in flight and lets its claim go, so another instance sends it at once", async () => {
    const r = await receiver((_, i) => (i === 0 ? { status: 200, hang: true } : { status: 200 }));
    const clock = new FakeClock();
    const path = join(dir, "stop.db");
    const [dbA, dbB] = [openDb(path), openDb(path)];
    const a = makeDelivery(dbA, channelsOn(r), { clock });
    a.start();
    const n = notice();
    dbA.transaction(() => a.enqueue(n, ["ops"]));
    await clock.advance(0);
    await r.waitFor(1);
    a.stop();
    await a.idle();
    const b = makeDelivery(dbB, channelsOn(r), { clock });
    b.start();
    await settle(clock, b);
    assert.equal(r.received.length, 2);
    assert.equal(r.received[0].headers["idempotency-key"], r.received[1].headers["idempotency-key"]);
    assert.deepEqual(b.status(n.run.id).map((s) => [s.status, s.attempts]), [["delivered", 2]]);
  });

  it("nothing logged, stored or shown holds a channel's URL path or secret", () => {
    assert.ok(logs.some((m) => m.includes("gave up")), "the failures above were logged");
    assert.ok(shown.some((s) => s.status === "failed") && shown.some((s) => s.status === "pending"));
    const text = JSON.stringify({ logs, shown, text: shown.map((s) => deliveryStatusText(s, 0)) });
    assert.doesNotMatch(text, new RegExp(HIDDEN));
    assert.ok(!text.includes(SECRET.slice(6)), "no secret");
    for (let i = 1; i <= dbNo; i++) {
      const db = openSqlite(join(dir, `db${i}.db`), { readonly: true });
      const rows = JSON.stringify(db.prepare("SELECT * FROM channel_deliveries").all());
      db.close();
      assert.doesNotMatch(rows, new RegExp(HIDDEN));
      assert.ok(!rows.includes(SECRET.slice(6)));
    }
  });
});

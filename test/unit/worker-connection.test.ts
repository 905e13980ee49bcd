/**
 * WorkerConnection on a fake clock and a scripted worker link: health transitions, the check's
 * timeout, the event stream's reconnects with backoff, stalls, and stop.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WorkerConnection, type WorkerConnectionOptions, type WorkerHealth, type WorkerLink } from "../../src/workers/worker-connection.ts";
import { WorkerUnauthorizedError, WorkerUnreachableError } from "../../src/workers/remote-client.ts";
import { FakeClock } from "../helpers/fake-clock.ts";

const WORKER = { name: "box", url: "http://10.0.0.5:4096", directory: "/srv/repo" };
const REFUSED = () => new WorkerUnreachableError(`worker "box" (http://10.0.0.5:4096) is unreachable: ECONNREFUSED`);

/** One subscription: the test pushes events, ends or fails it; an abort ends it. */
class FakeStream {
  private queue: Array<{ value?: unknown; end?: true; error?: unknown }> = [];
  private wake?: () => void;
  aborted = false;
  constructor(signal: AbortSignal) {
    signal.addEventListener("abort", () => {
      this.aborted = true;
      this.put({ end: true });
    });
  }
  push(value: unknown) {
    this.put({ value });
  }
  end() {
    this.put({ end: true });
  }
  fail(error: unknown) {
    this.put({ error });
  }
  private put(item: { value?: unknown; end?: true; error?: unknown }) {
    this.queue.push(item);
    this.wake?.();
  }
  async *iterate(): AsyncGenerator<unknown> {
    for (;;) {
      while (!this.queue.length) await new Promise<void>((resolve) => (this.wake = resolve));
      const item = this.queue.shift()!;
      if (item.error) throw item.error;
      if (item.end) return;
      yield item.value;
    }
  }
}

class FakeLink implements WorkerLink {
  ping: WorkerLink["ping"];
  pings = 0;
  checkouts = 0;
  checkout = true;
  answer: "ok" | "refused" | "unauthorized" | "hang" = "ok";
  /** How each new subscription behaves; by default it opens with server.connected and stays open. */
  onConnect: (stream: FakeStream) => void = (s) => s.push({ type: "server.connected" });
  streams: FakeStream[] = [];
  connectedAt: number[] = [];

  constructor(private clock: FakeClock) {
    this.ping = async (signal?: AbortSignal) => {
      this.pings++;
      if (this.answer === "refused") throw REFUSED();
      if (this.answer === "unauthorized") throw new WorkerUnauthorizedError("worker \"box\" refused the credentials (HTTP 401): the password in BOX_PW is wrong");
      if (this.answer === "hang") await new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    };
  }
  async checkoutExists() {
    this.checkouts++;
    return this.checkout;
  }
  events(signal: AbortSignal): AsyncIterable<unknown> {
    const stream = new FakeStream(signal);
    this.streams.push(stream);
    this.connectedAt.push(this.clock.now());
    this.onConnect(stream);
    return stream.iterate();
  }
}

function setup(options: WorkerConnectionOptions = {}) {
  const clock = new FakeClock();
  const link = new FakeLink(clock);
  const healths: WorkerHealth[] = [];
  const events: unknown[] = [];
  const logs: string[] = [];
  const connection = new WorkerConnection(WORKER, link, {
    clock,
    onHealth: (h) => healths.push(h),
    onEvent: (e) => events.push(e),
    log: (level, message) => logs.push(`${level} ${message}`),
    ...options,
  });
  return { clock, link, connection, healths, events, logs, start: clock.now() };
}

const states = (healths: WorkerHealth[]) => healths.map((h) => h.state);

describe("worker health", () => {
  it("unknown until the first check, then healthy; events reach onEvent in order", async () => {
    const { clock, link, connection, healths, events, start } = setup();
    assert.deepEqual(connection.health, { state: "unknown", since: start });
    connection.start();
    await clock.advance(0);
    assert.deepEqual(connection.health, { state: "healthy", since: start });
    assert.deepEqual(healths, [{ state: "healthy", since: start }]);
    link.streams[0].push({ type: "session.idle", properties: { sessionID: "ses_1" } });
    await clock.advance(0);
    assert.deepEqual(events, [{ type: "server.connected" }, { type: "session.idle", properties: { sessionID: "ses_1" } }]);
    assert.equal(link.checkouts, 1, "the checkout is looked at until seen once");
    assert.deepEqual([link.streams.length, link.streams[0].aborted], [1, false], "the first check does not restart the first subscription");
    connection.stop();
  });

  it("checks every 5 s: refused is unreachable with the reason, then healthy again; each change reported once", async () => {
    const { clock, link, connection, healths, start } = setup();
    connection.start();
    await clock.advance(0);
    link.answer = "refused";
    await clock.advance(4_999);
    assert.equal(connection.health.state, "healthy");
    await clock.advance(1);
    assert.deepEqual(connection.health, { state: "unreachable", since: start + 5_000, error: REFUSED().message });
    await clock.advance(10_000);
    assert.equal(link.pings, 4);
    link.answer = "ok";
    await clock.advance(5_000);
    assert.deepEqual(states(healths), ["healthy", "unreachable", "healthy"]);
    assert.equal(healths[2].since, start + 20_000);
    assert.equal(link.checkouts, 1, "a recovery does not list the checkout again");
    connection.stop();
  });

  it("a check with no answer within 3 s is unreachable, naming the wait", async () => {
    const { clock, link, connection } = setup();
    link.answer = "hang";
    const health = connection.check();
    await clock.advance(2_999);
    assert.equal(connection.health.state, "unknown");
    await clock.advance(1);
    assert.deepEqual(await health, { state: "unreachable", since: clock.now(), error: `worker "box" (http://10.0.0.5:4096) did not answer within 3 s` });
  });

  it("the status call and the checkout listing each get their own 3 s", async () => {
    const { clock, link, connection } = setup();
    const slow = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));
    link.ping = () => slow(2_000);
    link.checkoutExists = async () => (await slow(2_000), true);
    const health = connection.check();
    await clock.advance(4_000);
    assert.equal((await health).state, "healthy");
  });

  it("concurrent checks share one call", async () => {
    const { clock, link, connection } = setup();
    link.answer = "hang";
    const a = connection.check();
    const b = connection.check();
    await clock.advance(3_000);
    assert.deepEqual(await a, await b);
    assert.equal(link.pings, 1);
  });

  it("401 is unauthorized with the client's message", async () => {
    const { link, connection } = setup();
    link.answer = "unauthorized";
    const health = await connection.check();
    assert.equal(health.state, "unauthorized");
    assert.match(health.error!, /the password in BOX_PW is wrong/);
  });

  it("a checkout the worker cannot list is misconfigured, naming the directory and the fix", async () => {
    const { link, connection } = setup();
    link.checkout = false;
    const health = await connection.check();
    assert.equal(health.state, "misconfigured");
    assert.equal(health.error, `worker "box" cannot list /srv/repo: set "directory" to the project's checkout on that server`);
    assert.equal((await connection.check()).state, "misconfigured");
    link.checkout = true;
    assert.equal((await connection.check()).state, "healthy");
    assert.equal(link.checkouts, 3);
  });

  it("a start error (unset password variable): unauthorized at once, no call, no timer", async () => {
    const { clock, link, connection, healths } = setup({ startError: "worker \"box\": the environment variable BOX_PW is not set" });
    connection.start();
    await clock.advance(60_000);
    assert.deepEqual(connection.health, { state: "unauthorized", since: clock.now() - 60_000, error: "worker \"box\": the environment variable BOX_PW is not set" });
    assert.deepEqual((await connection.check()).state, "unauthorized");
    assert.equal(link.pings + link.streams.length, 0);
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(healths, []);
  });
});

describe("the worker's event stream", () => {
  it("reconnects with backoff doubling from 1 s to 30 s, and a stream that delivered resets it", async () => {
    const { clock, link, connection } = setup();
    link.answer = "refused";
    link.onConnect = (s) => s.fail(REFUSED());
    connection.start();
    await clock.advance(0);
    await clock.advance(91_000);
    const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]);
    assert.deepEqual(gaps(link.connectedAt), [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    link.onConnect = (s) => {
      s.push({ type: "server.connected" });
      s.end();
    };
    await clock.advance(30_000); // connects, delivers, ends
    link.onConnect = (s) => s.fail(REFUSED());
    await clock.advance(3_000);
    assert.deepEqual(gaps(link.connectedAt).slice(-3), [30_000, 1_000, 2_000]);
    connection.stop();
  });

  it("a stream that ends makes the connection check the worker; recovery reconnects at once, not after the backoff", async () => {
    const { clock, link, connection, healths, start } = setup();
    connection.start();
    await clock.advance(0);
    link.answer = "refused";
    link.onConnect = (s) => s.fail(REFUSED());
    link.streams[0].fail(REFUSED()); // the worker died
    await clock.advance(0);
    assert.deepEqual(states(healths), ["healthy", "unreachable"], "found at once, not at the next 5 s check");
    await clock.advance(31_000); // backoff is at 16 s now
    const attempts = link.connectedAt.length;
    link.answer = "ok";
    link.onConnect = (s) => s.push({ type: "server.connected" });
    await clock.advance(5_000); // the next health check
    assert.equal(connection.health.state, "healthy");
    assert.equal(link.connectedAt.length, attempts + 1);
    assert.deepEqual(link.connectedAt.slice(-2).map((t) => t - start), [31_000, 35_000], "reconnected when the check found it healthy, not 30 s later");
    connection.stop();
  });

  it("recovery also drops a subscription that hangs (sent while the worker was starting) and reconnects at once", async () => {
    const { clock, link, connection, start } = setup();
    link.answer = "refused";
    link.onConnect = (s) => s.fail(REFUSED());
    connection.start();
    await clock.advance(0);
    await clock.advance(3_000); // attempts at 0, 1 s, 3 s; the next at 7 s
    link.onConnect = () => undefined; // this one hangs
    await clock.advance(4_000);
    const hung = link.streams.at(-1)!;
    assert.equal(hung.aborted, false);
    link.answer = "ok";
    link.onConnect = (s) => s.push({ type: "server.connected" });
    await clock.advance(3_000); // the health check at 10 s finds it healthy
    assert.equal(hung.aborted, true);
    assert.deepEqual(link.connectedAt.slice(-2).map((t) => t - start), [7_000, 10_000]);
    connection.stop();
  });

  it("a stream silent for 30 s (no heartbeat) is dropped and reopened", async () => {
    const { clock, link, connection } = setup();
    connection.start();
    await clock.advance(0);
    await clock.advance(20_000);
    link.streams[0].push({ type: "server.heartbeat" });
    await clock.advance(0);
    await clock.advance(29_999);
    assert.equal(link.streams[0].aborted, false);
    await clock.advance(1);
    assert.equal(link.streams[0].aborted, true);
    await clock.advance(1_000);
    assert.equal(link.streams.length, 2);
    connection.stop();
  });

  it("a subscription that does not open within 5 s (a server still starting) is dropped and retried", async () => {
    const { clock, link, connection } = setup();
    link.onConnect = () => undefined; // no server.connected
    connection.start();
    await clock.advance(0);
    await clock.advance(4_999);
    assert.equal(link.streams[0].aborted, false);
    await clock.advance(1);
    assert.equal(link.streams[0].aborted, true);
    link.onConnect = (s) => s.push({ type: "server.connected" });
    await clock.advance(1_000);
    assert.equal(link.streams.length, 2);
    await clock.advance(29_000);
    assert.equal(link.streams[1].aborted, false, "an open stream has 30 s between events");
    connection.stop();
  });

  it("an onEvent that throws is logged; the stream goes on", async () => {
    const { clock, link, connection, logs } = setup({ onEvent: () => { throw new Error("boom"); } });
    connection.start();
    await clock.advance(0);
    link.streams[0].push({ type: "session.idle" });
    await clock.advance(0);
    assert.deepEqual(logs, ['error worker "box": onEvent threw: boom', 'error worker "box": onEvent threw: boom']);
    assert.equal(link.streams.length, 1);
    connection.stop();
  });

  it("stop: the stream is aborted, no timer is left, nothing more is called or reported", async () => {
    const { clock, link, connection, healths } = setup();
    connection.start();
    await clock.advance(0);
    connection.stop();
    await clock.advance(0);
    assert.equal(link.streams[0].aborted, true);
    assert.equal(clock.pendingTimers(), 0);
    const calls = link.pings + link.streams.length;
    link.answer = "refused";
    await clock.advance(120_000);
    assert.equal(link.pings + link.streams.length, calls);
    assert.deepEqual(states(healths), ["healthy"]);
  });

  it("stop during a backoff wait ends the loop", async () => {
    const { clock, link, connection } = setup();
    link.onConnect = (s) => s.fail(REFUSED());
    link.answer = "refused";
    connection.start();
    await clock.advance(0);
    await clock.advance(3_500);
    connection.stop();
    await clock.advance(0);
    assert.equal(clock.pendingTimers(), 0);
    const attempts = link.streams.length;
    await clock.advance(60_000);
    assert.equal(link.streams.length, attempts);
  });
});

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import { describe, it, type TestContext } from "node:test";
import { startWebhookListener, type AcceptAnswer, type WebhookDelivery, type WebhookListenerOptions } from "../../src/triggers/webhook-listener.ts";
import { signGithub, signStandardWebhook } from "../../src/triggers/webhook-signature.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LISTENER = fileURLToPath(new URL("../../src/triggers/webhook-listener.ts", import.meta.url));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const BODY = JSON.stringify({ ref: "refs/heads/main", marker: "body-marker-5f1c" });

type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string };
type SendOptions = { method?: string; headers?: Record<string, string>; body?: string | Buffer; chunked?: boolean; agent?: Agent };

/**
 * One request on node:http. Resolves with the answer even when the server answers before the
 * whole body was sent (as it does for 413); rejects only when no answer came.
 */
function send(url: string, path: string, options: SendOptions = {}): Promise<Reply> {
  if (options.chunked) return sendStreamed(url, path, options);
  const target = new URL(url);
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers = { ...options.headers, ...(body ? { "content-length": String(body.length) } : {}) };
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, method: options.method ?? "POST", headers, agent: options.agent ?? false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A body sent in 64 KB chunks with no Content-Length (fetch: Bun's node:http client stalls on chunked writes). */
async function sendStreamed(url: string, path: string, options: SendOptions): Promise<Reply> {
  const body = Buffer.from(options.body ?? "");
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= body.length) return controller.close();
      controller.enqueue(body.subarray(at, (at += 64 * 1024)));
    },
  });
  const res = await fetch(url + path, { method: options.method ?? "POST", headers: options.headers, body: stream, duplex: "half" } as RequestInit);
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

function githubHeaders(body: string, id = "gh-delivery-1"): Record<string, string> {
  return { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": id, "x-hub-signature-256": signGithub(SECRET, body) };
}

function standardHeaders(body: string, id = "msg_1", at = Date.now()): Record<string, string> {
  const timestamp = Math.floor(at / 1000);
  return { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signStandardWebhook(SECRET, id, timestamp, body) };
}

/** A listener on an ephemeral port with hooks "deploy" and "ci", recording deliveries and log lines. */
async function listener(t: TestContext, overrides: Partial<WebhookListenerOptions> = {}) {
  const accepted: WebhookDelivery[] = [];
  const logs: string[] = [];
  let answer: (d: WebhookDelivery) => AcceptAnswer | Promise<AcceptAnswer> = () => ({ status: 202, runId: accepted.length });
  const started = await startWebhookListener({
    host: "127.0.0.1",
    port: 0,
    lookup: (name) => (name === "deploy" || name === "ci" ? { secret: SECRET } : undefined),
    accept: (delivery) => {
      accepted.push(delivery);
      return answer(delivery);
    },
    log: (level, message, extra) => void logs.push(`${level} ${message} ${JSON.stringify(extra ?? {})}`),
    ...overrides,
  });
  assert.ok(started.listening, !started.listening ? started.reason : "");
  t.after(() => started.close());
  return { url: started.url, close: started.close, accepted, logs, answerWith: (fn: typeof answer) => void (answer = fn) };
}

function assertNothingSecretIn(logs: string[]) {
  const text = logs.join("\n");
  for (const hidden of [SECRET, SECRET.slice(6), "body-marker-5f1c", "sha256=", "v1,"]) assert.ok(!text.includes(hidden), `log shows ${hidden}: ${text}`);
}

describe("webhook listener", () => {
  it("listens on the port it was given, 0 picking a free one, and says which in url", async (t) => {
    const { url } = await listener(t);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(url).port, "0");
  });

  it("accepts a good GitHub signature once: 202 with the run, the event and delivery id passed on", async (t) => {
    const hook = await listener(t);
    const reply = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY });
    assert.equal(reply.status, 202);
    assert.deepEqual(JSON.parse(reply.body), { accepted: true, run: 1 });
    const contentKey = hook.accepted[0]?.contentKey;
    assert.deepEqual(hook.accepted, [{ name: "deploy", deliveryId: "gh-delivery-1", githubEvent: "push", contentType: "application/json", body: BODY, contentKey }]);
  });

  it("accepts a good Standard Webhooks signature once, with an async accept and its note", async (t) => {
    const hook = await listener(t);
    hook.answerWith(async () => ({ status: 202, note: "queued: no OpenCode process of this project runs" }));
    const reply = await send(hook.url, "/hooks/ci", { headers: standardHeaders(BODY), body: BODY });
    assert.equal(reply.status, 202);
    assert.deepEqual(JSON.parse(reply.body), { accepted: true, run: null, note: "queued: no OpenCode process of this project runs" });
    assert.equal(hook.accepted.length, 1);
    assert.equal(hook.accepted[0]!.deliveryId, "msg_1");
    assert.equal(hook.accepted[0]!.githubEvent, undefined);
  });

  it("answers 401 to a wrong or missing signature, passes nothing on and logs no secret, signature or body", async (t) => {
    const hook = await listener(t);
    const wrongGithub = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(`${BODY} `), body: BODY });
    const wrongStandard = await send(hook.url, "/hooks/deploy", { headers: standardHeaders("other"), body: BODY });
    const missing = await send(hook.url, "/hooks/deploy", { headers: { "content-type": "application/json" }, body: BODY });
    assert.deepEqual([wrongGithub.status, wrongStandard.status, missing.status], [401, 401, 401]);
    assert.match(JSON.parse(missing.body).error, /X-Hub-Signature-256/);
    assert.equal(hook.accepted.length, 0);
    assert.ok(hook.logs.some((line) => line.startsWith("warn") && line.includes("401")));
    assertNothingSecretIn(hook.logs);
  });

  it("refuses a Standard Webhooks delivery signed 6 minutes ago", async (t) => {
    const hook = await listener(t);
    const reply = await send(hook.url, "/hooks/deploy", { headers: standardHeaders(BODY, "msg_old", Date.now() - 6 * 60_000), body: BODY });
    assert.equal(reply.status, 401);
    assert.match(JSON.parse(reply.body).error, /5 minutes/);
    assert.equal(hook.accepted.length, 0);
  });

  it("answers 413 to a 2 MB body, announced or streamed, and keeps answering", async (t) => {
    const hook = await listener(t);
    const big = JSON.stringify({ blob: "x".repeat(2 * 1024 * 1024) });
    const announced = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(big), body: big });
    const streamed = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(big), body: big, chunked: true });
    assert.deepEqual([announced.status, streamed.status], [413, 413]);
    assert.equal(hook.accepted.length, 0);
    assert.equal((await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY })).status, 202);
  });

  it("answers an unknown hook exactly as a bad signature (401, same body), 404 to another path, and 405 with Allow: POST to a GET", async (t) => {
    const hook = await listener(t);
    // Each pair: a request to an unknown name (signed with deploy's secret), and one to "deploy" that is wrong the same way.
    const other = "whsec_another-secret-entirely";
    const pairs: Array<[Record<string, string>, Record<string, string>]> = [
      [githubHeaders(BODY), { ...githubHeaders(BODY), "x-hub-signature-256": signGithub(other, BODY) }],
      [standardHeaders(BODY), standardHeaders("another body")],
      [{ "content-type": "application/json" }, { "content-type": "application/json" }],
      [{ ...githubHeaders(BODY), "x-hub-signature-256": "sha256=nothex" }, { ...githubHeaders(BODY), "x-hub-signature-256": "sha256=nothex" }],
    ];
    const shape = (r: Reply) => Object.entries(r.headers).filter(([h]) => h !== "date").sort();
    for (const [toUnknown, toKnown] of pairs) {
      const unknown = await send(hook.url, "/hooks/nope", { headers: toUnknown, body: BODY });
      const known = await send(hook.url, "/hooks/deploy", { headers: toKnown, body: BODY });
      assert.deepEqual([unknown.status, unknown.body, shape(unknown)], [known.status, known.body, shape(known)]);
      assert.equal(unknown.status, 401);
    }
    assert.equal(hook.accepted.length, 0);
    for (const path of ["/", "/hooks", "/hooks/", "/hooks/deploy/more", "/other/deploy"]) {
      assert.equal((await send(hook.url, path, { headers: githubHeaders(BODY), body: BODY })).status, 404, path);
    }
    const get = await send(hook.url, "/hooks/deploy", { method: "GET" });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, "POST");
    assert.equal((await send(hook.url, "/hooks/deploy?source=ci", { headers: githubHeaders(BODY), body: BODY })).status, 202);
    assert.equal(hook.accepted.length, 1);
  });

  it("after answering early with the body unread, the same keep-alive client's next delivery still works", async (t) => {
    const hook = await listener(t);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const body = JSON.stringify({ pad: "y".repeat(200_000) });
    assert.equal((await send(hook.url, "/hooks/nope", { headers: githubHeaders(body), body, agent })).status, 401);
    assert.equal((await send(hook.url, "/hooks/deploy", { method: "PUT", body, agent })).status, 405);
    assert.equal((await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY, agent })).status, 202);
  });

  it("answers 429 with Retry-After after 60 deliveries in a second, and the server keeps answering", async (t) => {
    const hook = await listener(t);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    t.after(() => agent.destroy());
    const replies: Reply[] = [];
    for (let i = 0; i < 100; i++) replies.push(await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY, `d${i}`), body: BODY, agent }));
    assert.deepEqual(replies.slice(0, 60).map((r) => r.status), new Array(60).fill(202));
    assert.deepEqual(replies.slice(60).map((r) => r.status), new Array(40).fill(429));
    const retryAfter = Number(replies[99]!.headers["retry-after"]);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`);
    assert.equal(hook.accepted.length, 60);
    assert.equal((await send(hook.url, "/hooks/ci", { headers: githubHeaders(BODY), body: BODY })).status, 202, "another hook has its own limit");
    assert.equal((await send(hook.url, "/hooks/deploy", { method: "GET" })).status, 405);
    assert.equal(hook.logs.filter((line) => line.includes("429")).length, 1, "one warning, not one per refusal");
  });

  it("checks the signature before the rate limit: 60 unsigned POSTs, then a signed one is accepted", async (t) => {
    const hook = await listener(t);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    t.after(() => agent.destroy());
    const unsigned: Reply[] = [];
    for (let i = 0; i < 60; i++) unsigned.push(await send(hook.url, "/hooks/deploy", { headers: { "content-type": "application/json" }, body: BODY, agent }));
    assert.deepEqual(unsigned.map((r) => r.status), new Array(60).fill(401));
    const signed = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY, agent });
    assert.equal(signed.status, 202);
    assert.equal(hook.accepted.length, 1);
  });

  it("limits unsigned and wrongly signed requests per source address, apart from the signed deliveries' per-hook limit", async (t) => {
    let now = Date.UTC(2026, 10, 26, 12, 0, 0);
    const hook = await listener(t, { ratePerMinute: 3, now: () => now });
    const bad = () => send(hook.url, "/hooks/deploy", { headers: githubHeaders("forged"), body: BODY });
    const unknown = () => send(hook.url, "/hooks/nope", { headers: githubHeaders("forged"), body: BODY });
    assert.deepEqual([(await bad()).status, (await unknown()).status, (await bad()).status], [401, 401, 401]);
    const limited = await unknown();
    assert.equal(limited.status, 429, "the address's fourth failure in a minute");
    assert.equal(limited.headers["retry-after"], "60");
    assert.equal((await bad()).status, 429);
    const signed = (id: string) => send(hook.url, "/hooks/deploy", { headers: standardHeaders(BODY, id, now), body: BODY });
    assert.deepEqual([(await signed("a")).status, (await signed("b")).status, (await signed("c")).status, (await signed("d")).status], [202, 202, 202, 429], "signed: their own limit per hook");
    const warned = (what: string) => hook.logs.filter((line) => line.includes(what)).length;
    assert.deepEqual([warned("webhook deploy: delivery refused (401)"), warned("no active hook"), warned("(429)")], [1, 1, 2], "one warning a minute for each, not one per refusal");
    assert.ok(hook.logs.every((line) => !line.includes("nope")), "an unknown name is not logged");
    now += 60_000;
    assert.equal((await bad()).status, 401, "the window moved on");
    assertNothingSecretIn(hook.logs);
  });

  it("passes a content key: the same for the same hook, signature and body whatever the delivery id", async (t) => {
    const hook = await listener(t, { ratePerMinute: 0 });
    const withoutId = githubHeaders(BODY);
    delete withoutId["x-github-delivery"];
    for (const headers of [githubHeaders(BODY, "id-1"), githubHeaders(BODY, "id-2"), withoutId]) {
      assert.equal((await send(hook.url, "/hooks/deploy", { headers, body: BODY })).status, 202);
    }
    await send(hook.url, "/hooks/ci", { headers: githubHeaders(BODY, "id-1"), body: BODY });
    await send(hook.url, "/hooks/deploy", { headers: githubHeaders(`${BODY} `, "id-1"), body: `${BODY} ` });
    await send(hook.url, "/hooks/deploy", { headers: standardHeaders(BODY, "msg_9"), body: BODY });
    const keys = hook.accepted.map((d) => d.contentKey);
    assert.ok(keys.every((k) => typeof k === "string" && /^[0-9a-f]{64}$/.test(k)), String(keys));
    assert.equal(new Set(keys.slice(0, 3)).size, 1, "three delivery ids, one key");
    assert.equal(new Set(keys.slice(2)).size, keys.length - 2, "another hook or body: another key");
  });

  it("lets deliveries through again as the minute window moves (fake clock)", async (t) => {
    let now = Date.UTC(2026, 10, 26, 12, 0, 0);
    const hook = await listener(t, { ratePerMinute: 2, now: () => now });
    const deliver = () => send(hook.url, "/hooks/deploy", { headers: standardHeaders(BODY, `m${now}`, now), body: BODY });
    assert.equal((await deliver()).status, 202);
    now += 20_000;
    assert.equal((await deliver()).status, 202);
    const limited = await deliver();
    assert.equal(limited.status, 429);
    assert.equal(limited.headers["retry-after"], "40");
    now += 40_000;
    assert.equal((await deliver()).status, 202);
    assert.equal((await deliver()).status, 429);
  });

  it("has no limit with ratePerMinute 0", async (t) => {
    const hook = await listener(t, { ratePerMinute: 0 });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    t.after(() => agent.destroy());
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY, `d${i}`), body: BODY, agent })));
    assert.ok(replies.every((r) => r.status === 202));
  });

  it("answers 200 duplicate when accept says the delivery id was seen", async (t) => {
    const hook = await listener(t);
    hook.answerWith((d) => (hook.accepted.filter((a) => a.deliveryId === d.deliveryId).length > 1 ? { status: 200, duplicate: true } : { status: 202, runId: "run_1" }));
    const first = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY, "same"), body: BODY });
    const again = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY, "same"), body: BODY });
    assert.deepEqual([first.status, JSON.parse(first.body)], [202, { accepted: true, run: "run_1" }]);
    assert.deepEqual([again.status, JSON.parse(again.body)], [200, { duplicate: true }]);
  });

  it("attacker: replays of a signed delivery are answered as duplicates before they count against the hook's limit: its sender's next delivery is accepted", async (t) => {
    const now = Date.UTC(2026, 10, 28, 10, 0, 0);
    const stored: WebhookDelivery[] = [];
    const hook = await listener(t, {
      ratePerMinute: 3, now: () => now,
      seen: (d) => stored.some((s) => s.name === d.name && (s.deliveryId === d.deliveryId || s.contentKey === d.contentKey)),
    });
    hook.answerWith((d) => (stored.push(d), { status: 202, runId: stored.length }));
    const captured = standardHeaders(BODY, "msg_captured", now);
    assert.equal((await send(hook.url, "/hooks/deploy", { headers: captured, body: BODY })).status, 202);
    for (let i = 0; i < 5; i++) {
      const replay = await send(hook.url, "/hooks/deploy", { headers: captured, body: BODY });
      assert.deepEqual([replay.status, JSON.parse(replay.body)], [200, { duplicate: true }]);
    }
    const next = await send(hook.url, "/hooks/deploy", { headers: standardHeaders(BODY, "msg_next", now), body: BODY });
    assert.equal(next.status, 202, "the replays spent none of the 3 a minute");
    assert.equal(hook.accepted.length, 2, "a replay never reaches accept");
  });

  it("answers 500 when accept or lookup throws, logs it without secret or body, and keeps answering", async (t) => {
    let lookupFails = false;
    const hook = await listener(t, {
      lookup: (name) => {
        if (lookupFails) throw new Error("database is locked");
        return name === "deploy" ? { secret: SECRET } : undefined;
      },
    });
    hook.answerWith(async () => {
      throw new Error("SQLITE_FULL: database or disk is full");
    });
    const failed = await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY });
    assert.equal(failed.status, 500);
    assert.ok(hook.logs.some((line) => line.startsWith("error") && line.includes("SQLITE_FULL") && line.includes("deploy")));
    lookupFails = true;
    assert.equal((await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY })).status, 500);
    assertNothingSecretIn(hook.logs);
  });

  it("a logger that throws or rejects changes nothing", async (t) => {
    const hook = await listener(t, { log: () => Promise.reject(new Error("host log is down")) });
    assert.equal((await send(hook.url, "/hooks/deploy", { body: BODY })).status, 401);
    const throwing = await listener(t, {
      log: () => {
        throw new Error("host log is down");
      },
    });
    assert.equal((await send(throwing.url, "/hooks/deploy", { body: BODY })).status, 401);
  });

  it("does not listen, and does not throw, when the port is in use", async (t) => {
    const first = await listener(t);
    const second = await startWebhookListener({ host: "127.0.0.1", port: Number(new URL(first.url).port), lookup: () => undefined, accept: () => ({ status: 202 }) });
    assert.equal(second.listening, false);
    assert.match(!second.listening ? second.reason : "", /in use/);
    assert.equal((await send(first.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY })).status, 202);
  });

  it("refuses bad limits without throwing", async () => {
    const bad = await startWebhookListener({ host: "127.0.0.1", port: 0, ratePerMinute: -1, lookup: () => undefined, accept: () => ({ status: 202 }) });
    assert.deepEqual(bad, { listening: false, reason: "ratePerMinute must be a whole number >= 0 (0 turns the limit off), got -1" });
  });

  it("closes at once with a keep-alive connection open, and close twice is fine", async (t) => {
    const hook = await listener(t);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    assert.equal((await send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY, agent })).status, 202);
    const started = performance.now();
    await hook.close();
    await hook.close();
    // The server's keep-alive timeout is 2 s: a close that waited for it would take that long.
    assert.ok(performance.now() - started < 1_000, `close took ${Math.round(performance.now() - started)} ms`);
    await assert.rejects(send(hook.url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY }), /ECONNREFUSED/);
  });
  // The client must be Node's: Bun's own client, sending to a Bun server, gets some 400s after early answers (any Bun server, not this one).
  const underBun = process.versions.bun ? "run from Node (npx bun test uses Bun's client)" : false;
  it("under Bun, as inside OpenCode, answers a node:http client 413 and 401 with the body unread, and keeps the connection usable", { timeout: 30_000, skip: underBun }, async (t) => {
    const probe = `
      const { startWebhookListener } = await import(${JSON.stringify(LISTENER)});
      const l = await startWebhookListener({ host: "127.0.0.1", port: 0, ratePerMinute: 0,
        lookup: (name) => (name === "deploy" ? { secret: ${JSON.stringify(SECRET)} } : undefined), accept: () => ({ status: 202, runId: 1 }) });
      console.log(l.listening ? l.url : "not listening: " + l.reason);
      process.stdin.on("end", () => process.exit(0)).resume();`;
    const bun = spawn("npx", ["bun", "-e", probe], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
    t.after(() => void bun.stdin.end());
    let output = "";
    bun.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    bun.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    await Promise.race([once(bun.stdout, "data"), once(bun, "exit")]);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(output)?.[0];
    assert.ok(url, `the listener did not start under Bun: ${output}`);
    const big = "x".repeat(2 * 1024 * 1024);
    for (let i = 0; i < 5; i++) {
      assert.equal((await send(url, "/hooks/deploy", { headers: githubHeaders(big), body: big })).status, 413);
      assert.equal((await send(url, "/hooks/deploy", { headers: githubHeaders(big), body: big, chunked: true })).status, 413);
    }
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const padded = "y".repeat(200_000);
    assert.equal((await send(url, "/hooks/nope", { body: padded, agent })).status, 401);
    assert.equal((await send(url, "/hooks/deploy", { method: "PUT", body: padded, agent })).status, 405);
    assert.equal((await send(url, "/hooks/deploy", { headers: githubHeaders(BODY), body: BODY, agent })).status, 202);
  });
});

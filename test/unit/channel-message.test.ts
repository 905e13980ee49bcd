import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RESULT_CAP, type ChannelNotice } from "../../src/channels/channel-message.ts";
import type { HttpRequest } from "../../src/channels/formats/channel-format.ts";
import { channelFormat } from "../../src/channels/formats/registry.ts";
import { backoffMs, DEFAULT_RETRY, nextStep, outcomeOfResponse, retryAfterMs } from "../../src/channels/retry-policy.ts";
import { verifyWebhookSignature } from "../../src/triggers/webhook-signature.ts";

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

function notice(over: Partial<ChannelNotice> = {}): ChannelNotice {
  return {
    automation: { id: "auto_1", title: "Nightly tests" },
    run: { no: 3, id: 42 },
    status: "completed",
    trigger: "cron 0 9 * * 1-5, planned 2026-11-26T09:00:00Z",
    summary: "all 120 tests pass",
    result: "all 120 tests pass\nnothing else to report",
    taskId: "ses_child",
    dashboardUrl: "http://127.0.0.1:4321/automation?project=p&id=auto_1&run=3",
    ...over,
  };
}

/** The request the named http format makes for a channel at a fixed URL. */
function channelRequest(n: ChannelNotice, format: string, ctx: { deliveryId: string; now: number; secret?: string }): HttpRequest {
  const config = { format, url: "https://example.test/hook", ...(ctx.secret !== undefined ? { secret: ctx.secret } : {}) };
  const request = channelFormat(format)!.request(n, config, { deliveryId: ctx.deliveryId, now: ctx.now, platform: "linux" });
  assert.equal(request.kind, "http");
  return request as HttpRequest;
}

describe("channel messages", () => {
  it("json carries every field and, with a secret, a Standard Webhooks signature that verifies", () => {
    const req = channelRequest(notice(), "json", { deliveryId: "d-1", now: NOW, secret: SECRET });
    assert.deepEqual(JSON.parse(req.body), {
      type: "automation.run", automation: { id: "auto_1", title: "Nightly tests" }, run: { no: 3, id: 42 }, status: "completed",
      trigger: notice().trigger, summary: "all 120 tests pass", result: notice().result, branch: null, taskId: "ses_child", dashboardUrl: notice().dashboardUrl,
    });
    assert.equal(req.headers["Idempotency-Key"], "d-1");
    assert.equal(req.headers["webhook-id"], "d-1");
    assert.equal(req.headers["webhook-timestamp"], String(NOW / 1000));
    assert.deepEqual(verifyWebhookSignature(SECRET, req.headers, req.body, NOW), { ok: true, deliveryId: "d-1" });
    assert.equal(verifyWebhookSignature(SECRET, req.headers, req.body.replace("120", "121"), NOW).ok, false);
    const unsigned = channelRequest(notice(), "json", { deliveryId: "d-1", now: NOW });
    assert.equal(unsigned.headers["webhook-signature"], undefined);
    assert.equal(unsigned.body, req.body);
  });

  it("json names an isolated run's branch in a field of its own, null when the run left none", () => {
    const isolated = JSON.parse(channelRequest(notice({ branch: "bg/au1-run-3", result: "Changes on branch bg/au1-run-3.\ndone" }), "json", { deliveryId: "d", now: NOW }).body);
    assert.equal(isolated.branch, "bg/au1-run-3");
    assert.equal(JSON.parse(channelRequest(notice(), "json", { deliveryId: "d", now: NOW }).body).branch, null);
  });

  it("json caps the result at 4,000 characters and says how much was left out", () => {
    const body = JSON.parse(channelRequest(notice({ result: "x".repeat(10_000) }), "json", { deliveryId: "d", now: NOW }).body);
    assert.equal(body.result.length, RESULT_CAP);
    assert.match(body.result, /\[6\d{3} more characters\]$/);
  });

  it("slack has a fallback text and one section block, with & < > escaped and the run's link", () => {
    const req = channelRequest(notice({ status: "error", summary: "a < b & c", result: "boom <@here>" }), "slack", { deliveryId: "d", now: NOW });
    const body = JSON.parse(req.body);
    assert.equal(req.headers["Content-Type"], "application/json");
    assert.equal(body.text, "❌ Nightly tests run #3 failed: a &lt; b &amp; c");
    assert.equal(body.blocks.length, 1);
    assert.equal(body.blocks[0].type, "section");
    assert.equal(body.blocks[0].text.type, "mrkdwn");
    assert.match(body.blocks[0].text.text, /^\*Nightly tests\* run #3 failed\n_cron 0 9/);
    assert.match(body.blocks[0].text.text, /boom &lt;@here&gt;/);
    assert.match(body.blocks[0].text.text, /<http:\/\/127\.0\.0\.1:4321\/automation\?project=p&amp;id=auto_1&amp;run=3\|Open the run>$/);
  });

  it("slack keeps its section under 3,000 characters however long the result", () => {
    const body = JSON.parse(channelRequest(notice({ result: "<".repeat(5000) }), "slack", { deliveryId: "d", now: NOW }).body);
    const text: string = body.blocks[0].text.text;
    assert.ok(text.length <= 3000, String(text.length));
    assert.doesNotMatch(text, /&[a-z]{0,3}…/); // no half entity before the cut marker
    assert.match(text, /Open the run>$/);
  });

  it("discord fits content in 2,000 characters, keeps the link, and pings nobody", () => {
    const req = channelRequest(notice({ result: "🙂".repeat(3000) }), "discord", { deliveryId: "d", now: NOW });
    const body = JSON.parse(req.body);
    assert.ok(body.content.length <= 2000, String(body.content.length));
    assert.match(body.content, /^✅ \*\*Nightly tests\*\* run #3 completed \(cron/);
    assert.match(body.content, /more characters\]\n<http:\/\/127\.0\.0\.1:4321\/automation\?project=p&id=auto_1&run=3>$/);
    assert.doesNotMatch(body.content, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no half emoji at the cut
    assert.deepEqual(body.allowed_mentions, { parse: [] });
  });

  it("ntfy sends the result as plain text with Title, Priority, Tags and Click", () => {
    const ok = channelRequest(notice(), "ntfy", { deliveryId: "d", now: NOW });
    assert.equal(ok.headers.Title, "Nightly tests run #3 completed");
    assert.equal(ok.headers.Priority, "default");
    assert.equal(ok.headers.Tags, "white_check_mark,robot");
    assert.equal(ok.headers.Click, notice().dashboardUrl);
    assert.equal(ok.headers["Content-Type"], "text/plain; charset=utf-8");
    assert.equal(ok.body, `${notice().result}\n\n${notice().trigger}`);
    const failed = channelRequest(notice({ status: "error", dashboardUrl: undefined }), "ntfy", { deliveryId: "d", now: NOW });
    assert.equal(failed.headers.Priority, "high");
    assert.equal(failed.headers.Tags, "x,robot");
    assert.equal(failed.headers.Click, undefined);
  });

  it("ntfy encodes a non-ASCII title (fetch takes Latin-1 headers only) and keeps the body under 4 KB", () => {
    const req = channelRequest(notice({ automation: { id: "a", title: "Tests nocturnes é 🌙\nx" }, result: "é".repeat(5000) }), "ntfy", { deliveryId: "d", now: NOW });
    assert.match(req.headers.Title, /^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
    assert.equal(Buffer.from(req.headers.Title.slice(10, -2), "base64").toString("utf8"), "Tests nocturnes é 🌙 x run #3 completed");
    assert.ok(Buffer.byteLength(req.body) <= 3900);
    assert.doesNotThrow(() => new Headers(req.headers));
  });
});

describe("channel retry policy", () => {
  it("backs off 5 s, 10 s, 20 s ... up to 30 minutes", () => {
    assert.deepEqual([1, 2, 3, 4].map((n) => backoffMs(n, DEFAULT_RETRY)), [5000, 10_000, 20_000, 40_000]);
    assert.equal(backoffMs(40, DEFAULT_RETRY), 1_800_000);
  });

  it("reads Retry-After in seconds or as an HTTP date", () => {
    assert.equal(retryAfterMs("120", NOW), 120_000);
    assert.equal(retryAfterMs(new Date(NOW + 30_000).toUTCString(), NOW), 30_000);
    assert.equal(retryAfterMs("soon", NOW), undefined);
    assert.equal(retryAfterMs(null, NOW), undefined);
  });

  it("retries 408, 429 and 5xx; gives up at once on other 4xx and on redirects", () => {
    assert.deepEqual(outcomeOfResponse(204, null, NOW), { kind: "delivered" });
    assert.deepEqual(outcomeOfResponse(429, "7", NOW), { kind: "retry", reason: "HTTP 429", afterMs: 7000 });
    assert.deepEqual(outcomeOfResponse(502, "7", NOW), { kind: "retry", reason: "HTTP 502" });
    assert.equal(outcomeOfResponse(408, null, NOW).kind, "retry");
    assert.equal(outcomeOfResponse(404, null, NOW).kind, "fail");
    assert.equal(outcomeOfResponse(302, null, NOW).kind, "fail");
  });

  it("never tries before a Retry-After, puts the last try at the end of the window, then gives up", () => {
    const created = NOW;
    const item = { attempts: 2, createdAt: created };
    assert.deepEqual(nextStep({ kind: "retry", reason: "HTTP 429", afterMs: 120_000 }, item, NOW, DEFAULT_RETRY), { kind: "retry", at: NOW + 120_000, reason: "HTTP 429, Retry-After 120 s" });
    const late = created + DEFAULT_RETRY.windowMs - 1000;
    assert.deepEqual(nextStep({ kind: "retry", reason: "HTTP 500" }, { ...item, attempts: 50 }, late, DEFAULT_RETRY), { kind: "retry", at: created + DEFAULT_RETRY.windowMs, reason: "HTTP 500" });
    const step = nextStep({ kind: "retry", reason: "HTTP 500" }, { ...item, attempts: 51 }, created + DEFAULT_RETRY.windowMs, DEFAULT_RETRY);
    assert.deepEqual(step, { kind: "fail", reason: "gave up after 51 attempts over 24 h; last: HTTP 500" });
    assert.equal(nextStep({ kind: "retry", reason: "HTTP 429", afterMs: 2 * DEFAULT_RETRY.windowMs }, item, NOW, DEFAULT_RETRY).kind, "fail");
  });
});

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newWebhookSecret, signGithub, signStandardWebhook, verifySignedDelivery, verifyWebhookSignature } from "../../src/triggers/webhook-signature.ts";

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const BODY = '{"action":"opened","number":12}';

function standardHeaders(secret: string, body: string, at = NOW, id = "msg_1"): Record<string, string> {
  const timestamp = Math.floor(at / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signStandardWebhook(secret, id, timestamp, body) };
}

describe("webhook signatures", () => {
  it("signs as GitHub's documentation does", () => {
    // The example in GitHub's "Validating webhook deliveries".
    assert.equal(signGithub("It's a Secret to Everybody", "Hello, World!"), "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  });

  it("signs as the Standard Webhooks reference does", () => {
    // The example in the Standard Webhooks specification.
    const signature = signStandardWebhook(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    assert.equal(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("makes a new whsec_ secret of 32 random bytes each time", () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.equal(Buffer.from(a.slice(6), "base64").length, 32);
    assert.notEqual(a, b);
  });

  it("accepts a GitHub signature and takes the delivery id from X-GitHub-Delivery", () => {
    const headers = { "x-hub-signature-256": signGithub(SECRET, BODY), "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" };
    assert.deepEqual(verifyWebhookSignature(SECRET, headers, Buffer.from(BODY), NOW), { ok: true, deliveryId: "72d3162e-cc78-11e3-81ab-4c9367dc0958" });
    assert.deepEqual(verifyWebhookSignature(SECRET, { "X-Hub-Signature-256": signGithub(SECRET, BODY) }, BODY, NOW), { ok: true });
    const signature = signGithub(SECRET, BODY).slice("sha256=".length);
    const upper = signGithub(SECRET, BODY).toUpperCase().replace("SHA256=", "sha256=");
    assert.deepEqual(verifySignedDelivery(SECRET, { "X-Hub-Signature-256": upper }, BODY, NOW), { ok: true, signature }, "the signature comes back in one form");
  });

  it("refuses a GitHub signature for another body, another secret or in a bad form", () => {
    const good = signGithub(SECRET, BODY);
    for (const [headers, body] of [
      [{ "x-hub-signature-256": good }, BODY + " "],
      [{ "x-hub-signature-256": signGithub("whsec_other", BODY) }, BODY],
      [{ "x-hub-signature-256": good.slice(0, -2) }, BODY],
      [{ "x-hub-signature-256": good.replace("sha256=", "sha1=") }, BODY],
      [{ "x-hub-signature-256": `${good}zz` }, BODY],
    ] as const) {
      const check = verifyWebhookSignature(SECRET, headers, body, NOW);
      assert.equal(check.ok, false, JSON.stringify(headers));
    }
  });

  it("accepts a Standard Webhooks signature, also among several, and gives webhook-id as the delivery id", () => {
    const headers = standardHeaders(SECRET, BODY);
    assert.deepEqual(verifyWebhookSignature(SECRET, headers, BODY, NOW), { ok: true, deliveryId: "msg_1" });
    const signature = Buffer.from(headers["webhook-signature"].slice(3), "base64").toString("hex");
    const rotated = `v1,${Buffer.alloc(32, 7).toString("base64")} v1a,abc ${headers["webhook-signature"]}`;
    assert.deepEqual(verifyWebhookSignature(SECRET, { ...headers, "webhook-signature": rotated }, BODY, NOW), { ok: true, deliveryId: "msg_1" });
    assert.deepEqual(verifySignedDelivery(SECRET, { ...headers, "webhook-signature": rotated }, BODY, NOW), { ok: true, deliveryId: "msg_1", signature }, "the one that matched");
  });

  it("refuses a Standard Webhooks signature over another body, id or timestamp", () => {
    const headers = standardHeaders(SECRET, BODY);
    assert.equal(verifyWebhookSignature(SECRET, headers, `${BODY} `, NOW).ok, false);
    assert.equal(verifyWebhookSignature(SECRET, { ...headers, "webhook-id": "msg_2" }, BODY, NOW).ok, false);
    const later = String(Number(headers["webhook-timestamp"]) + 1);
    assert.equal(verifyWebhookSignature(SECRET, { ...headers, "webhook-timestamp": later }, BODY, NOW).ok, false);
    assert.equal(verifyWebhookSignature(SECRET, { ...headers, "webhook-signature": "v1,not*base64" }, BODY, NOW).ok, false);
    assert.equal(verifyWebhookSignature(newWebhookSecret(), headers, BODY, NOW).ok, false);
  });

  it("refuses timestamps more than 5 minutes off, either way, and accepts 4 minutes", () => {
    const minute = 60_000;
    const old = verifyWebhookSignature(SECRET, standardHeaders(SECRET, BODY, NOW - 6 * minute), BODY, NOW);
    assert.equal(old.ok, false);
    assert.match(!old.ok ? old.reason : "", /5 minutes/);
    assert.equal(verifyWebhookSignature(SECRET, standardHeaders(SECRET, BODY, NOW + 6 * minute), BODY, NOW).ok, false);
    assert.equal(verifyWebhookSignature(SECRET, standardHeaders(SECRET, BODY, NOW - 4 * minute), BODY, NOW).ok, true);
    assert.equal(verifyWebhookSignature(SECRET, { ...standardHeaders(SECRET, BODY), "webhook-timestamp": "soon" }, BODY, NOW).ok, false);
  });

  it("keys Standard Webhooks by the secret's own bytes when it is not a whsec_ secret", () => {
    const plain = "my deploy secret";
    assert.equal(verifyWebhookSignature(plain, standardHeaders(plain, BODY), BODY, NOW).ok, true);
    assert.equal(verifyWebhookSignature("my other secret", standardHeaders(plain, BODY), BODY, NOW).ok, false);
  });

  it("refuses a delivery with no signature, or with Standard Webhooks headers missing, naming the headers", () => {
    const none = verifyWebhookSignature(SECRET, { "content-type": "application/json" }, BODY, NOW);
    assert.equal(none.ok, false);
    assert.match(!none.ok ? none.reason : "", /X-Hub-Signature-256.*webhook-signature/);
    const { "webhook-id": _id, ...noId } = standardHeaders(SECRET, BODY);
    const missing = verifyWebhookSignature(SECRET, noId, BODY, NOW);
    assert.match(!missing.ok ? missing.reason : "", /webhook-id/);
  });

  it("never puts the secret or a signature in a refusal reason", () => {
    const headers = standardHeaders(SECRET, BODY);
    const wrong = verifyWebhookSignature(SECRET, headers, "tampered", NOW);
    const github = verifyWebhookSignature(SECRET, { "x-hub-signature-256": signGithub(SECRET, BODY) }, "tampered", NOW);
    for (const check of [wrong, github]) {
      assert.equal(check.ok, false);
      const reason = !check.ok ? check.reason : "";
      for (const hidden of [SECRET, SECRET.slice(6), headers["webhook-signature"].slice(3), signGithub(SECRET, BODY).slice(7)]) assert.ok(!reason.includes(hidden), reason);
    }
  });
});

/**
 * Webhook signatures: GitHub's `X-Hub-Signature-256` and Standard Webhooks
 * (https://www.standardwebhooks.com: `webhook-id`, `webhook-timestamp`, `webhook-signature`).
 * Nothing here logs or returns a secret or a signature: refusal reasons only name what is wrong.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export type SignatureCheck = { ok: true; deliveryId?: string } | { ok: false; reason: string };
/** `signature`: the matching HMAC in hex, one per signed content (the listener's dedupe key is made from it; never logged). */
export type SignedDelivery = { ok: true; deliveryId?: string; signature: string } | { ok: false; reason: string };

/** Header values as node:http gives them (lower-case names); other casings are looked up too. */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

const PREFIX = "whsec_";
/** Standard Webhooks: a timestamp further than this from now is refused (replay window). */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** A new secret, Standard Webhooks style: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString("base64");
}

/**
 * Checks a delivery's signature against the hook's secret. Standard Webhooks headers are used
 * when present (they carry a timestamp, so an old delivery cannot be replayed), else GitHub's.
 * `now` is in milliseconds.
 */
export function verifyWebhookSignature(secret: string, headers: WebhookHeaders, rawBody: Buffer | string, now: number): SignatureCheck {
  const check = verifySignedDelivery(secret, headers, rawBody, now);
  if (!check.ok) return check;
  return check.deliveryId ? { ok: true, deliveryId: check.deliveryId } : { ok: true };
}

/** verifyWebhookSignature, plus the signature that matched, in one form whatever the header's. */
export function verifySignedDelivery(secret: string, headers: WebhookHeaders, rawBody: Buffer | string, now: number): SignedDelivery {
  if (header(headers, "webhook-signature") !== undefined) return verifyStandard(secret, headers, toBuffer(rawBody), now);
  const github = header(headers, "x-hub-signature-256");
  if (github !== undefined) return verifyGithub(secret, github, header(headers, "x-github-delivery"), toBuffer(rawBody));
  return { ok: false, reason: "no signature: send X-Hub-Signature-256 (GitHub) or webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks)" };
}

/** The `X-Hub-Signature-256` value for body: `sha256=<hex>`, keyed by the secret string as GitHub does. */
export function signGithub(secret: string, body: Buffer | string): string {
  return `sha256=${githubDigest(secret, toBuffer(body)).toString("hex")}`;
}

/** The `webhook-signature` value for a delivery: `v1,<base64>`. `timestamp` is in seconds. */
export function signStandardWebhook(secret: string, id: string, timestamp: number | string, body: Buffer | string): string {
  return `v1,${standardDigest(secret, id, String(timestamp), toBuffer(body)).toString("base64")}`;
}

function verifyGithub(secret: string, value: string, deliveryId: string | undefined, body: Buffer): SignedDelivery {
  const hex = value.trim().replace(/^sha256=/i, "");
  if (!value.trim().toLowerCase().startsWith("sha256=") || !SHA256_HEX.test(hex)) {
    return { ok: false, reason: "X-Hub-Signature-256 is malformed: expected sha256=<64 hex digits>" };
  }
  const expected = githubDigest(secret, body);
  if (!sameBytes(expected, Buffer.from(hex, "hex"))) return { ok: false, reason: "X-Hub-Signature-256 does not match the body" };
  return { ok: true, ...(deliveryId ? { deliveryId } : {}), signature: expected.toString("hex") };
}

function verifyStandard(secret: string, headers: WebhookHeaders, body: Buffer, now: number): SignedDelivery {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  if (!id || !timestamp) return { ok: false, reason: "webhook-signature needs webhook-id and webhook-timestamp too" };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: "webhook-timestamp must be whole seconds since 1970" };
  if (Math.abs(now - Number(timestamp) * 1000) > TIMESTAMP_TOLERANCE_MS) {
    return { ok: false, reason: "webhook-timestamp is more than 5 minutes from now (a replay, or a clock out of sync)" };
  }
  const expected = standardDigest(secret, id, timestamp, body);
  const candidates = header(headers, "webhook-signature")!.split(" ").filter((part) => part.startsWith("v1,"));
  const match = candidates.some((part) => {
    const encoded = part.slice(3);
    return BASE64.test(encoded) && sameBytes(expected, Buffer.from(encoded, "base64"));
  });
  return match ? { ok: true, deliveryId: id, signature: expected.toString("hex") } : { ok: false, reason: "no v1 signature in webhook-signature matches the body" };
}

function githubDigest(secret: string, body: Buffer): Buffer {
  return createHmac("sha256", secret).update(body).digest();
}

function standardDigest(secret: string, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac("sha256", standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The base64-decoded part after `whsec_`; a secret not in that form (given by the user) keys by its own bytes. */
function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : "";
  return BASE64.test(encoded) ? Buffer.from(encoded, "base64") : Buffer.from(secret, "utf8");
}

/** Constant time for equal lengths; a length mismatch says nothing about the secret. */
function sameBytes(expected: Buffer, given: Buffer): boolean {
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  let value = headers[name];
  if (value === undefined) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  return Array.isArray(value) ? value[0] : value;
}

function toBuffer(body: Buffer | string): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : body;
}

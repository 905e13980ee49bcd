import { signStandardWebhook } from "../../triggers/webhook-signature.ts";
import { capChars, RESULT_CAP, type ChannelNotice } from "../channel-message.ts";
import { kindOf } from "../../core/option-checks.ts";
import type { ChannelFormat } from "./channel-format.ts";
import { checkUrl, httpRequest, jsonBodyOf } from "./http-format.ts";

const WHSEC = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const MIN_SECRET_CHARS = 16;
const EXAMPLE = "https://example.com/hooks/errands";

/**
 * Every field of the notice as JSON, for your own receiver (`branch`: an isolated run's branch, null
 * when it left none). With a `secret`, each request is signed
 * with Standard Webhooks headers: the secret itself never leaves, only the signature.
 */
export const json: ChannelFormat = {
  format: "json",
  keys: ["url", "secret"],
  example: { format: "json", url: EXAMPLE, secret: "whsec_ZXhhbXBsZS1zZWNyZXQtbm90LWEtcmVhbC1vbmU=" },
  validateConfig(at, input, problems) {
    const before = problems.length;
    const url = checkUrl(at, input, problems, EXAMPLE);
    const secret = checkSecret(at, input.secret, problems);
    if (problems.length > before || url === undefined) return undefined;
    return { format: "json", url, ...(secret !== undefined ? { secret } : {}) };
  },
  request(notice, config, ctx) {
    const body = jsonBody(notice);
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (config.secret !== undefined) {
      const timestamp = Math.floor(ctx.now / 1000);
      headers["webhook-id"] = ctx.deliveryId;
      headers["webhook-timestamp"] = String(timestamp);
      headers["webhook-signature"] = signStandardWebhook(config.secret, ctx.deliveryId, timestamp, body);
    }
    return httpRequest(config.url, ctx, headers, body);
  },
  limit: { max: RESULT_CAP, of: (request) => String(jsonBodyOf(request).result ?? "").length },
};

function jsonBody(n: ChannelNotice): string {
  return JSON.stringify({
    type: "automation.run",
    automation: { id: n.automation.id, title: n.automation.title },
    run: { no: n.run.no, id: n.run.id },
    status: n.status,
    trigger: n.trigger,
    summary: n.summary,
    result: capChars(n.result, RESULT_CAP),
    // Always present, so a receiver can branch on it without looking for the key.
    branch: n.branch ?? null,
    ...(n.taskId !== undefined ? { taskId: n.taskId } : {}),
    ...(n.dashboardUrl !== undefined ? { dashboardUrl: n.dashboardUrl } : {}),
  });
}

function checkSecret(at: string, value: unknown, problems: string[]): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    problems.push(`"${at}.secret" must be a string, e.g. "whsec_" followed by base64 of 32 random bytes, got ${kindOf(value)}`);
    return undefined;
  }
  if (value.startsWith("whsec_") ? !WHSEC.test(value) : value.length < MIN_SECRET_CHARS) {
    problems.push(`"${at}.secret" must be "whsec_" followed by base64, or at least ${MIN_SECRET_CHARS} characters (e.g. openssl rand -base64 32 after "whsec_")`);
    return undefined;
  }
  return value;
}

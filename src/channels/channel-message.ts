/**
 * Pure formatters: one finished run (a ChannelNotice) to the HTTP request each channel format
 * expects. No I/O; `now` and the delivery id come from the caller, so a retry re-signs the same body.
 */
import { signStandardWebhook } from "../triggers/webhook-signature.ts";
import type { ChannelFormat } from "./channel-config.ts";

/** Characters of a run's result a channel gets at most (formats with smaller limits cut further). */
export const RESULT_CAP = 4000;
const DISCORD_CONTENT_MAX = 2000;
/** Slack refuses a section block whose text is longer. */
const SLACK_SECTION_MAX = 3000;
/** ntfy turns a longer message into an attachment (or refuses it where attachments are off). */
const NTFY_BODY_MAX_BYTES = 3900;
/** A trigger's words in a headline. */
const TRIGGER_MAX = 300;

export type ChannelNotice = {
  automation: { id: string; title: string };
  run: { no: number; id: number };
  status: "completed" | "error" | "cancelled";
  /** Why the run happened, in words: "cron 0 9 * * 1-5, planned …", "file: src/a.ts changed". */
  trigger: string;
  /** One line: the result's first line, or the error. */
  summary: string;
  /** The run's result (or error), capped at RESULT_CAP characters. */
  result: string;
  taskId?: string;
  /** The run's page on the dashboard, when one is served. */
  dashboardUrl?: string;
};

export type ChannelRequest = { headers: Record<string, string>; body: string };

export type RequestContext = {
  /** Stable across attempts: sent as Idempotency-Key (and webhook-id when signed). */
  deliveryId: string;
  /** ms; the signature's timestamp. */
  now: number;
  /** json only: sign with Standard Webhooks headers. */
  secret?: string;
};

const WORDS = { completed: "completed", error: "failed", cancelled: "was cancelled" } as const;
const EMOJI = { completed: "✅", error: "❌", cancelled: "⏹️" } as const;
const NTFY_TAGS = { completed: "white_check_mark", error: "x", cancelled: "stop_button" } as const;

export function channelRequest(notice: ChannelNotice, format: ChannelFormat, ctx: RequestContext): ChannelRequest {
  const base = { "User-Agent": "opencode-errands", "Idempotency-Key": ctx.deliveryId };
  switch (format) {
    case "json":
      return jsonRequest(notice, ctx, base);
    case "slack":
      return { headers: { ...base, "Content-Type": "application/json" }, body: JSON.stringify(slackBody(notice)) };
    case "discord":
      return { headers: { ...base, "Content-Type": "application/json" }, body: JSON.stringify(discordBody(notice)) };
    case "ntfy":
      return ntfyRequest(notice, base);
  }
}

function jsonRequest(n: ChannelNotice, ctx: RequestContext, base: Record<string, string>): ChannelRequest {
  const body = JSON.stringify({
    type: "automation.run",
    automation: { id: n.automation.id, title: n.automation.title },
    run: { no: n.run.no, id: n.run.id },
    status: n.status,
    trigger: n.trigger,
    summary: n.summary,
    result: capChars(n.result, RESULT_CAP),
    ...(n.taskId !== undefined ? { taskId: n.taskId } : {}),
    ...(n.dashboardUrl !== undefined ? { dashboardUrl: n.dashboardUrl } : {}),
  });
  const headers: Record<string, string> = { ...base, "Content-Type": "application/json" };
  if (ctx.secret !== undefined) {
    const timestamp = Math.floor(ctx.now / 1000);
    headers["webhook-id"] = ctx.deliveryId;
    headers["webhook-timestamp"] = String(timestamp);
    headers["webhook-signature"] = signStandardWebhook(ctx.secret, ctx.deliveryId, timestamp, body);
  }
  return { headers, body };
}

/** `text` is the notification's fallback; the section block is what Slack shows. */
function slackBody(n: ChannelNotice): { text: string; blocks: unknown[] } {
  const head = `${EMOJI[n.status]} ${headline(n)}`;
  const link = n.dashboardUrl ? `\n<${slackEscape(n.dashboardUrl)}|Open the run>` : "";
  const top = `*${slackEscape(n.automation.title)}* run #${n.run.no} ${WORDS[n.status]}\n_${slackEscape(capChars(n.trigger, TRIGGER_MAX))}_\n`;
  const room = SLACK_SECTION_MAX - top.length - link.length;
  const result = cutEscaped(slackEscape(capChars(n.result.trim() || n.summary, RESULT_CAP)), Math.max(0, room));
  return {
    text: slackEscape(`${head}: ${n.summary}`),
    blocks: [{ type: "section", text: { type: "mrkdwn", text: `${top}${result}${link}` } }],
  };
}

/** `content` within Discord's 2,000 characters; mentions in a result never ping anyone. */
function discordBody(n: ChannelNotice): { content: string; allowed_mentions: { parse: never[] } } {
  const top = `${EMOJI[n.status]} **${discordEscape(n.automation.title)}** run #${n.run.no} ${WORDS[n.status]} (${capChars(n.trigger, TRIGGER_MAX)})\n`;
  const link = n.dashboardUrl ? `\n<${n.dashboardUrl}>` : "";
  const room = DISCORD_CONTENT_MAX - top.length - link.length;
  const content = `${capChars(top, DISCORD_CONTENT_MAX - link.length)}${capChars(n.result.trim() || n.summary, Math.max(0, room))}${link}`;
  return { content: capChars(content, DISCORD_CONTENT_MAX), allowed_mentions: { parse: [] } };
}

function ntfyRequest(n: ChannelNotice, base: Record<string, string>): ChannelRequest {
  const failed = n.status !== "completed";
  const headers: Record<string, string> = {
    ...base,
    "Content-Type": "text/plain; charset=utf-8",
    Title: headerValue(headline(n)),
    Priority: failed ? "high" : "default",
    Tags: `${NTFY_TAGS[n.status]},robot`,
  };
  const click = safeUrl(n.dashboardUrl);
  if (click) headers.Click = click;
  const text = `${capChars(n.result.trim() || n.summary, RESULT_CAP)}\n\n${n.trigger}`;
  return { headers, body: capBytes(text, NTFY_BODY_MAX_BYTES) };
}

/** "Nightly tests run #3 failed". */
function headline(n: ChannelNotice): string {
  return `${n.automation.title} run #${n.run.no} ${WORDS[n.status]}`;
}

/** Cuts to at most `max` UTF-16 units, never inside a surrogate pair, and says how much was left out. */
export function capChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `… [${text.length - max} more characters]`;
  if (max <= marker.length) return wholeChars(text, max);
  return wholeChars(text, max - marker.length) + marker;
}

function wholeChars(text: string, max: number): string {
  let cut = text.slice(0, max);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut;
}

function capBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const marker = "\n[…]";
  // A character cut in half decodes as U+FFFD: drop it.
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes - Buffer.byteLength(marker)).toString("utf8").replace(/\uFFFD$/, "");
  return cut + marker;
}

function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Cuts escaped text without leaving half an entity (`&am`) at the end. */
function cutEscaped(text: string, max: number): string {
  return text.length <= max ? text : capChars(text, max).replace(/&[a-z]{0,3}(?=… \[)/, "");
}

function discordEscape(text: string): string {
  return text.replace(/([*_~`|\\>])/g, "\\$1");
}

/**
 * An HTTP header value from any text: one line, and non-ASCII as an RFC 2047 encoded word (ntfy
 * decodes it; fetch refuses header values beyond Latin-1).
 */
function headerValue(text: string): string {
  const line = text.replace(/[\r\n\t]+/g, " ").trim().slice(0, 200);
  return /^[\x20-\x7e]*$/.test(line) ? line : `=?UTF-8?B?${Buffer.from(line, "utf8").toString("base64")}?=`;
}

function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

import { capBytes, capChars, headline, RESULT_CAP, type ChannelNotice } from "../channel-message.ts";
import type { ChannelFormat, HttpRequest, RequestContext } from "./channel-format.ts";
import { checkUrl, httpRequest } from "./http-format.ts";

/** ntfy turns a longer message into an attachment (or refuses it where attachments are off). */
const NTFY_BODY_MAX_BYTES = 3900;
const NTFY_TAGS = { completed: "white_check_mark", error: "x", cancelled: "stop_button" } as const;
const EXAMPLE = "https://ntfy.sh/my-topic";

/** An ntfy topic: the headline as Title, the result as a plain-text body under 3,900 bytes. */
export const ntfy: ChannelFormat = {
  format: "ntfy",
  keys: ["url"],
  example: { format: "ntfy", url: EXAMPLE },
  validateConfig(at, input, problems) {
    const url = checkUrl(at, input, problems, EXAMPLE);
    return url === undefined ? undefined : { format: "ntfy", url };
  },
  request: (notice, config, ctx) => ntfyRequest(notice, config.url, ctx),
  limit: { max: NTFY_BODY_MAX_BYTES, of: (request) => (request.kind === "http" ? Buffer.byteLength(request.body) : 0) },
};

function ntfyRequest(n: ChannelNotice, url: string | undefined, ctx: RequestContext): HttpRequest {
  const headers: Record<string, string> = {
    "Content-Type": "text/plain; charset=utf-8",
    Title: headerValue(headline(n)),
    Priority: n.status !== "completed" ? "high" : "default",
    Tags: `${NTFY_TAGS[n.status]},robot`,
  };
  const click = safeUrl(n.dashboardUrl);
  if (click) headers.Click = click;
  const text = `${capChars(n.result.trim() || n.summary, RESULT_CAP)}\n\n${n.trigger}`;
  return httpRequest(url, ctx, headers, capBytes(text, NTFY_BODY_MAX_BYTES));
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

import { capChars, type ChannelNotice } from "../channel-message.ts";
import type { ChannelFormat, ChannelRequest, RequestContext } from "./channel-format.ts";

/** Lines of the result a notification shows at most, and characters. */
const BODY_LINES = 4;
const BODY_MAX = 300;
const SUMMARY_MAX = 120;
/** osascript's first operand: fixed, so the ones after it are never read as options. */
const OSASCRIPT_OPERAND = "opencode-errands";

/**
 * A notification on this computer's desktop, no URL: `notify-send` on Linux, `osascript` on
 * macOS; elsewhere nothing is sent. The automation's title is the summary, the first lines of the
 * result the body. Configured as `{ "format": "desktop" }`.
 */
export const desktop: ChannelFormat = {
  format: "desktop",
  keys: [],
  example: { format: "desktop" },
  validateConfig: () => ({ format: "desktop" }),
  request: (notice, _config, ctx) => desktopRequest(notice, ctx),
  // The body as shown: an escaped & < > is one character on the screen.
  limit: { max: BODY_MAX, of: (request) => (request.kind === "exec" ? String(request.args.at(-1)).replace(/&(amp|lt|gt);/g, "&").length : 0) },
};

function desktopRequest(n: ChannelNotice, ctx: RequestContext): ChannelRequest {
  const summary = capChars(plain(n.automation.title).replace(/\s+/g, " ").trim(), SUMMARY_MAX) || "OpenCode automation";
  const body = firstLines(plain(n.result).trim() || plain(n.summary));
  if (ctx.platform === "linux") {
    const urgency = n.status === "error" ? "critical" : "normal";
    // notify-send shows the body as markup: & < > are escaped so a result cannot add links.
    return { kind: "exec", program: "notify-send", args: ["--app-name=opencode-errands", `--urgency=${urgency}`, "--", summary, escapeMarkup(body)], dataFrom: 3 };
  }
  if (ctx.platform === "darwin") {
    const script = ["-e", "on run argv", "-e", "display notification (item 3 of argv) with title (item 2 of argv)", "-e", "end run"];
    return { kind: "exec", program: "osascript", args: [...script, OSASCRIPT_OPERAND, summary, body], dataFrom: script.length + 1 };
  }
  return { kind: "none", reason: `desktop notifications need notify-send (Linux) or osascript (macOS), and this system is ${ctx.platform}: nothing is sent; remove the channel or use ntfy` };
}

/** The first BODY_LINES non-blank lines, within BODY_MAX characters. */
function firstLines(text: string): string {
  const lines = text.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim() !== "");
  const shown = lines.slice(0, BODY_LINES).join("\n") + (lines.length > BODY_LINES ? " …" : "");
  return capChars(shown, BODY_MAX);
}

/** No control characters but newlines (a NUL cannot be passed in an argument at all). */
function plain(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, " ");
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

import { capChars, EMOJI, WORDS, type ChannelNotice } from "../channel-message.ts";
import type { ChannelFormat } from "./channel-format.ts";
import { checkUrl, httpRequest, jsonBodyOf } from "./http-format.ts";

const DISCORD_CONTENT_MAX = 2000;
/** A trigger's words in a headline. */
const TRIGGER_MAX = 300;
const EXAMPLE = "https://discord.com/api/webhooks/your-webhook-path";

/** A Discord webhook: `content` within 2,000 characters, mentions never ping anyone. */
export const discord: ChannelFormat = {
  format: "discord",
  keys: ["url"],
  example: { format: "discord", url: EXAMPLE },
  validateConfig(at, input, problems) {
    const url = checkUrl(at, input, problems, EXAMPLE);
    return url === undefined ? undefined : { format: "discord", url };
  },
  request: (notice, config, ctx) => httpRequest(config.url, ctx, { "Content-Type": "application/json" }, JSON.stringify(discordBody(notice))),
  limit: { max: DISCORD_CONTENT_MAX, of: (request) => String(jsonBodyOf(request).content ?? "").length },
};

function discordBody(n: ChannelNotice): { content: string; allowed_mentions: { parse: never[] } } {
  const top = `${EMOJI[n.status]} **${discordEscape(n.automation.title)}** run #${n.run.no} ${WORDS[n.status]} (${capChars(n.trigger, TRIGGER_MAX)})\n`;
  const link = n.dashboardUrl ? `\n<${n.dashboardUrl}>` : "";
  const room = DISCORD_CONTENT_MAX - top.length - link.length;
  const content = `${capChars(top, DISCORD_CONTENT_MAX - link.length)}${capChars(n.result.trim() || n.summary, Math.max(0, room))}${link}`;
  return { content: capChars(content, DISCORD_CONTENT_MAX), allowed_mentions: { parse: [] } };
}

function discordEscape(text: string): string {
  return text.replace(/([*_~`|\\>])/g, "\\$1");
}

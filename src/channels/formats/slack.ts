import { capChars, EMOJI, headline, RESULT_CAP, WORDS, type ChannelNotice } from "../channel-message.ts";
import type { ChannelFormat } from "./channel-format.ts";
import { checkUrl, httpRequest, jsonBodyOf } from "./http-format.ts";

/** Slack refuses a section block whose text is longer. */
const SLACK_SECTION_MAX = 3000;
/** A trigger's words in a headline. */
const TRIGGER_MAX = 300;
const EXAMPLE = "https://hooks.slack.com/services/your-webhook-path";

/** A Slack incoming webhook: a fallback `text` and one mrkdwn section block. */
export const slack: ChannelFormat = {
  format: "slack",
  keys: ["url"],
  example: { format: "slack", url: EXAMPLE },
  validateConfig(at, input, problems) {
    const url = checkUrl(at, input, problems, EXAMPLE);
    return url === undefined ? undefined : { format: "slack", url };
  },
  request: (notice, config, ctx) => httpRequest(config.url, ctx, { "Content-Type": "application/json" }, JSON.stringify(slackBody(notice))),
  limit: { max: SLACK_SECTION_MAX, of: (request) => String(jsonBodyOf(request).blocks?.[0]?.text?.text ?? "").length },
};

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

function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Cuts escaped text without leaving half an entity (`&am`) at the end. */
function cutEscaped(text: string, max: number): string {
  return text.length <= max ? text : capChars(text, max).replace(/&[a-z]{0,3}(?=… \[)/, "");
}

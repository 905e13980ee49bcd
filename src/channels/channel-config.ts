/**
 * The `channels` option: where the user (never the model) lets automation results go.
 * A channel's URL and secret stay in the options: everything shown elsewhere (errors, logs, the
 * outbox table, task_read, the dashboard) names the channel and its URL's host only.
 */
import { checkHttpUrl, kindOf } from "../core/option-checks.ts";

export const CHANNEL_FORMATS = ["slack", "ntfy", "discord", "json"] as const;
export type ChannelFormat = (typeof CHANNEL_FORMATS)[number];

export type ChannelConfig = {
  /** http(s) URL the notification is POSTed to; it often carries a token (Slack, Discord, ntfy topic). */
  url: string;
  format: ChannelFormat;
  /** json only: signs each request with Standard Webhooks headers. */
  secret?: string;
};

/** Channel name -> its configuration, as given in the options. */
export type Channels = Record<string, ChannelConfig>;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const KEYS = ["url", "format", "secret"];
const MAX_CHANNELS = 50;
const WHSEC = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const MIN_SECRET_CHARS = 16;

/** The host a channel's URL points to, e.g. "hooks.slack.com" or "127.0.0.1:9000": all that may be shown of it. */
export function channelHost(url: string): string {
  try {
    return new URL(url).host || "?";
  } catch {
    return "?";
  }
}

/** "team (hooks.slack.com)": how a channel is named in every message. */
export function channelLabel(name: string, config: Pick<ChannelConfig, "url"> | undefined): string {
  return config ? `${name} (${channelHost(config.url)})` : name;
}

/**
 * Reads the raw `channels` option. Problems are phrased for OptionsError and never quote a URL
 * or a secret: only the channel's name, the key at fault and, for a URL that parses, its host.
 */
export function parseChannels(raw: unknown): { channels: Channels; problems: string[] } {
  const channels: Channels = {};
  const problems: string[] = [];
  if (raw === undefined) return { channels, problems };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    problems.push(`"channels" must be an object of named channels, e.g. { "team": { "url": "https://hooks.slack.com/services/…", "format": "slack" } }, got ${kindOf(raw)}`);
    return { channels, problems };
  }
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_CHANNELS) problems.push(`"channels" may hold at most ${MAX_CHANNELS} channels, got ${entries.length}`);
  for (const [name, value] of entries.slice(0, MAX_CHANNELS)) {
    const parsed = parseChannel(name, value, problems);
    if (parsed) channels[name] = parsed;
  }
  return { channels, problems };
}

function parseChannel(name: string, value: unknown, problems: string[]): ChannelConfig | undefined {
  const before = problems.length;
  const at = `channels.${NAME.test(name) ? name : "…"}`;
  if (!NAME.test(name)) {
    problems.push(`channel name ${JSON.stringify(name.slice(0, 60))} must be 1-40 letters, digits, "-" or "_", starting with a letter or digit`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push(`"${at}" must be an object { "url": "https://…", "format": "slack" | "ntfy" | "discord" | "json", "secret"?: "whsec_…" }, got ${kindOf(value)}`);
    return undefined;
  }
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!KEYS.includes(key)) problems.push(`"${at}" has an unknown key "${key.slice(0, 40)}" (known: ${KEYS.join(", ")})`);
  }
  const url = checkUrl(at, input.url, problems);
  const format = input.format;
  if (!(CHANNEL_FORMATS as readonly unknown[]).includes(format)) {
    const got = typeof format === "string" && /^[\w-]{1,20}$/.test(format) ? JSON.stringify(format) : kindOf(format);
    problems.push(`"${at}.format" must be one of ${CHANNEL_FORMATS.map((f) => `"${f}"`).join(", ")}, got ${got}`);
  }
  const secret = checkSecret(at, input.secret, format, problems);
  if (problems.length > before || url === undefined) return undefined;
  return { url, format: format as ChannelFormat, ...(secret !== undefined ? { secret } : {}) };
}


function checkSecret(at: string, value: unknown, format: unknown, problems: string[]): string | undefined {
  if (value === undefined) return undefined;
  if (format !== "json") {
    problems.push(`"${at}.secret" is only for format "json" (Standard Webhooks signing); remove it: slack, discord and ntfy URLs carry their own token`);
    return undefined;
  }
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

/** What a value is, without its content (it may be a URL or a secret put in the wrong place). */

function checkUrl(at: string, value: unknown, problems: string[]): string | undefined {
  return checkHttpUrl(at, value, problems, {
    what: "the http(s) URL to POST to", example: "https://ntfy.sh/my-topic", credentials: "use a URL whose token is in its path",
  })?.href;
}

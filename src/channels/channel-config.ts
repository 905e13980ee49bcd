/**
 * The `channels` option: where the user (never the model) lets automation results go.
 * A channel's URL and secret stay in the options: everything shown elsewhere (errors, logs, the
 * outbox table, task_read, the dashboard) names the channel and its URL's host only.
 * Each format checks its own keys (formats/<format>.ts); this file checks the rest.
 */
import { kindOf } from "../core/option-checks.ts";
import type { ChannelConfig, ChannelFormat } from "./formats/channel-format.ts";
import { CHANNEL_FORMATS, channelFormat } from "./formats/registry.ts";

/** Channel name -> its configuration, as given in the options. */
export type Channels = Record<string, ChannelConfig>;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const MAX_CHANNELS = 50;

/**
 * Where a channel's notices go, all that may be shown of it: its URL's host ("hooks.slack.com",
 * "127.0.0.1:9000"), or "this computer" for a format without a URL.
 */
export function channelHost(url: string | undefined): string {
  if (url === undefined) return "this computer";
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
    problems.push(`"${at}" must be an object with a "format" and that format's keys, e.g. ${examples()}, got ${kindOf(value)}`);
    return undefined;
  }
  const input = value as Record<string, unknown>;
  const format = channelFormat(typeof input.format === "string" ? input.format : "");
  if (!format) {
    const got = typeof input.format === "string" && /^[\w-]{1,20}$/.test(input.format) ? JSON.stringify(input.format) : kindOf(input.format);
    problems.push(`"${at}.format" must be one of ${CHANNEL_FORMATS.map((f) => `"${f.format}"`).join(", ")}, got ${got}`);
  }
  checkKeys(at, input, format, problems);
  const config = format?.validateConfig(at, input, problems);
  return problems.length > before ? undefined : config;
}

/** Unknown keys are refused; a key of another format names the formats it belongs to. */
function checkKeys(at: string, input: Record<string, unknown>, format: ChannelFormat | undefined, problems: string[]): void {
  for (const key of Object.keys(input)) {
    if (key === "format" || format?.keys.includes(key)) continue;
    const owners = CHANNEL_FORMATS.filter((f) => f.keys.includes(key)).map((f) => `"${f.format}"`);
    if (owners.length === 0) {
      const known = ["format", ...new Set(format?.keys ?? CHANNEL_FORMATS.flatMap((f) => f.keys))];
      problems.push(`"${at}" has an unknown key "${key.slice(0, 40)}" (known: ${known.join(", ")})`);
    } else if (format) {
      problems.push(`"${at}.${key}" is only for format ${owners.join(" or ")}; remove it from this "${format.format}" channel`);
    }
  }
}

/** One example per distinct set of keys, e.g. {"format":"slack","url":"https://…"} or {"format":"desktop"}. */
function examples(): string {
  const shapes = new Map<string, string>();
  for (const f of CHANNEL_FORMATS) {
    const shape = f.keys.join(",");
    if (!shapes.has(shape)) shapes.set(shape, JSON.stringify(f.example));
  }
  return [...shapes.values()].join(" or ");
}

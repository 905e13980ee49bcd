/**
 * Every channel format, by the name used in the options. A new format is one file in this folder
 * (a ChannelFormat, held to test/unit/channel-formats.conformance.test.ts) and one entry here.
 */
import type { ChannelFormat } from "./channel-format.ts";
import { desktop } from "./desktop.ts";
import { discord } from "./discord.ts";
import { json } from "./json.ts";
import { ntfy } from "./ntfy.ts";
import { slack } from "./slack.ts";

export const CHANNEL_FORMATS: readonly ChannelFormat[] = [slack, ntfy, discord, json, desktop];

export function channelFormat(name: string): ChannelFormat | undefined {
  return CHANNEL_FORMATS.find((f) => f.format === name);
}

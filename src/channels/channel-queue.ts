import { maskSecrets } from "../core/mask-secrets.ts";
import type { ChannelDeliveryStatus, QueuedDelivery } from "../store/channel-outbox-repository.ts";
import { channelHost, type Channels } from "./channel-config.ts";
import { capChars, RESULT_CAP, type ChannelNotice } from "./channel-message.ts";

/** The outbox rows for a run's notice: one per named channel; a name the options do not hold is failed at once. */
export function queuedDeliveries(names: readonly string[], channels: Channels): QueuedDelivery[] {
  return [...new Set(names)].map((name) => {
    const config = channels[name];
    if (config) return { channel: name, host: channelHost(config.url) };
    return { channel: name, host: "-", failure: `channel "${name}" is not configured (configured: ${Object.keys(channels).join(", ") || "none"})` };
  });
}

/** What is kept of a notice: result capped, and token shapes masked before they leave the machine. */
export function storedNotice(n: ChannelNotice): string {
  return JSON.stringify({ ...n, summary: maskSecrets(n.summary), result: capChars(maskSecrets(n.result), RESULT_CAP), trigger: maskSecrets(n.trigger) });
}

/** "team (hooks.slack.com): delivered after 2 attempts" and the like, for task_read. */
export function deliveryStatusText(s: ChannelDeliveryStatus, now: number): string {
  const who = `${s.channel} (${s.host})`;
  const tries = `${s.attempts} attempt${s.attempts === 1 ? "" : "s"}`;
  if (s.status === "delivered") return `${who}: delivered${s.attempts > 1 ? ` after ${tries}` : ""}`;
  if (s.status === "failed") return `${who}: FAILED${s.attempts > 0 ? ` after ${tries}` : ""}: ${s.lastError ?? "unknown"}`;
  const next = s.nextAttemptAt === undefined ? "" : `, next attempt in ${Math.max(0, Math.round((s.nextAttemptAt - now) / 1000))} s`;
  return `${who}: pending${s.attempts > 0 ? ` (${tries}; last: ${s.lastError ?? "?"})` : ""}${next}`;
}

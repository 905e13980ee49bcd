import type { Channels } from "./channel-config.ts";
import type { ChannelDelivery } from "./channel-delivery.ts";
import { deliveryStatusText } from "./channel-queue.ts";
import type { ChannelOutboxRepository } from "../store/channel-outbox-repository.ts";
import type { ChannelNotice } from "./channel-message.ts";

/** Where run notices go besides the report-to session: the user's configured channels. */
export type ChannelSink = {
  /** The configured channel names. */
  names(): string[];
  /** Inside the run-end transaction: queue the notice for these channels. */
  enqueue(notice: ChannelNotice, channels: readonly string[]): void;
  /** One line per channel a run was sent to: "team (hooks.slack.com): delivered". */
  statusLines(runId: number): string[];
};

/**
 * The automation layer's way out to the user's channels. The delivery module loads only when
 * channels are configured, before the core starts (so no run can end before it is there).
 */
export class LazyChannelSink implements ChannelSink {
  private delivery: ChannelDelivery | undefined;

  constructor(private channels: Channels) {}

  names(): string[] {
    return Object.keys(this.channels);
  }

  async load(outbox: ChannelOutboxRepository, log: (message: string) => void): Promise<void> {
    if (this.names().length === 0) return;
    const { ChannelDelivery } = await import("./channel-delivery.ts");
    this.delivery = new ChannelDelivery({ outbox, channels: this.channels, log });
    this.delivery.start();
  }

  enqueue(...args: Parameters<ChannelSink["enqueue"]>): void {
    this.delivery?.enqueue(...args);
  }

  statusLines(runId: number): string[] {
    return (this.delivery?.status(runId) ?? []).map((s) => deliveryStatusText(s, Date.now()));
  }

  stop(): void {
    this.delivery?.stop();
  }
}

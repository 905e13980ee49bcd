import type { StartSource } from "./trigger-source.ts";
import type { IncomingDelivery } from "./webhook-deliveries.ts";

/** What firing an event did: the run it started (if any) and when that run's launch is over. */
export type FireResult = { runId?: number; launched: Promise<unknown> };

export type WebhookListener = { url: string; close(): Promise<void> };

export type StartWebhookListener = (options: {
  host: string;
  port: number;
  lookup(name: string): { secret: string } | undefined;
  accept(delivery: IncomingDelivery): { status: 202; runId?: number | string; note?: string } | { status: 200; duplicate: true };
  seen(delivery: Pick<IncomingDelivery, "name" | "deliveryId" | "contentKey">): boolean;
  log(level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>): void;
}) => Promise<({ listening: true } & WebhookListener) | { listening: false; reason: string }>;

/**
 * How each kind's source starts, by kind (tests give fakes), and the one webhook listener: a
 * source's module loads the first time a trigger of its kind runs in this process, so a project
 * without event triggers never loads a watcher library, a listener or a poller.
 */
export type SourceLoaders = {
  [kind: string]: (() => Promise<StartSource<never> | StartWebhookListener>) | undefined;
} & {
  webhookListener(): Promise<StartWebhookListener>;
};

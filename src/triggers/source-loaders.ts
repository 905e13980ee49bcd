import type { EventSpec } from "../automations/automation.ts";
import type { StartSource } from "./trigger-source.ts";
import type { IncomingDelivery } from "./webhook-deliveries.ts";

type SpecOf<K extends EventSpec["kind"]> = Extract<EventSpec, { kind: K }>;

/** What firing an event did: the run it started (if any) and when that run's launch is over. */
export type FireResult = { runId?: number; launched: Promise<unknown> };

export type WebhookListener = { url: string; close(): Promise<void> };

export type StartWebhookListener = (options: {
  host: string;
  port: number;
  lookup(name: string): { secret: string } | undefined;
  accept(delivery: IncomingDelivery): { status: 202; runId?: number | string; note?: string } | { status: 200; duplicate: true };
  log(level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>): void;
}) => Promise<({ listening: true } & WebhookListener) | { listening: false; reason: string }>;

/**
 * Each source's module, loaded the first time a trigger of its kind runs in this process: a
 * project without event triggers never loads a watcher library, a listener or a poller.
 */
export type SourceLoaders = {
  watch(): Promise<StartSource<SpecOf<"watch">>>;
  command(): Promise<StartSource<SpecOf<"command">>>;
  github(): Promise<StartSource<SpecOf<"github">>>;
  webhookListener(): Promise<StartWebhookListener>;
};

/**
 * What a channel format is: one object per file in this folder, listed in registry.ts. A format
 * checks its part of a channel's options and turns a finished run's notice into one request the
 * delivery loop knows how to send (an HTTP POST or a program run without a shell).
 */
import type { ChannelNotice } from "../channel-message.ts";

/** One channel as given in the options. Which keys are set depends on the format. */
export type ChannelConfig = {
  format: string;
  /** http(s) URL the notification is POSTed to; it often carries a token (Slack, Discord, ntfy topic). */
  url?: string;
  /** json only: signs each request with Standard Webhooks headers. */
  secret?: string;
};

export type RequestContext = {
  /** Stable across attempts: sent as Idempotency-Key (and webhook-id when signed). */
  deliveryId: string;
  /** ms; the signature's timestamp. */
  now: number;
  /** The operating system the request is for (process.platform). */
  platform: NodeJS.Platform;
};

/** POST `body` to `url`, the one place the channel's URL appears. */
export type HttpRequest = { kind: "http"; url: string; headers: Record<string, string>; body: string };

/**
 * Run `program` with `args`, never through a shell. `args[dataFrom]` onwards hold text from the run
 * (which the model wrote): the arguments before them make sure the program reads them as data,
 * never as options ("--", or a fixed first operand).
 */
export type ExecRequest = { kind: "exec"; program: string; args: string[]; dataFrom: number };

/** Nothing can be sent from this machine; `reason` says why and what would make it work. */
export type NoRequest = { kind: "none"; reason: string };

export type ChannelRequest = HttpRequest | ExecRequest | NoRequest;

export type ChannelFormat = {
  /** The value of "format" in the options. */
  format: string;
  /** The keys a channel of this format may have besides "format". */
  keys: readonly string[];
  /** A channel of this format that is valid, for messages and tests. */
  example: ChannelConfig;
  /**
   * Checks the channel's own keys (`input` is an object; "format" and unknown keys are already
   * checked). Pushes problems that name the fix and never quote a URL or a secret.
   */
  validateConfig(at: string, input: Record<string, unknown>, problems: string[]): ChannelConfig | undefined;
  /** Pure: same notice, config and context, same request. */
  request(notice: ChannelNotice, config: ChannelConfig, ctx: RequestContext): ChannelRequest;
  /** The receiver's limit on what a request carries (characters, bytes or lines), and how to measure it. */
  limit: { max: number; of(request: ChannelRequest): number };
};

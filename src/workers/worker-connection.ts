/**
 * One worker's reachability and event stream. A health check (one cheap authenticated call)
 * runs every few seconds and decides the worker's health; the `/event` subscription reconnects
 * with exponential backoff and hands every raw event to `onEvent` (the caller normalises them).
 * After a reconnect the stream opens with `server.connected`: events in between are lost, so the
 * caller should catch up by polling then.
 */
import { systemClock, type Clock } from "../core/clock.ts";
import { WorkerUnauthorizedError, type RemoteClient } from "./remote-client.ts";
import type { WorkerConfig } from "./worker-config.ts";

export type WorkerHealthState = "unknown" | "healthy" | "unreachable" | "unauthorized" | "misconfigured";

/** `since`: when the worker entered this state (clock ms). `error`: why it is not healthy. */
export type WorkerHealth = { state: WorkerHealthState; since: number; error?: string };

/** What the connection needs of the worker's client. */
export type WorkerLink = Pick<RemoteClient, "ping" | "checkoutExists" | "events">;

export type WorkerConnectionOptions = {
  onEvent?: (raw: unknown) => void;
  /** Called on every change of health state. */
  onHealth?: (health: WorkerHealth) => void;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  clock?: Clock;
  /** Health check period. Default 5 s. */
  checkEveryMs?: number;
  /** A check that gets no answer within this is "unreachable". Default 3 s. */
  checkTimeoutMs?: number;
  /** Wait before the first reconnect, doubled each time up to maxBackoffMs. Defaults 1 s, 30 s. */
  firstBackoffMs?: number;
  maxBackoffMs?: number;
  /** A stream silent this long is dead (the server sends a heartbeat every 10 s). Default 30 s. */
  stallMs?: number;
  /** A subscription whose first event (`server.connected`) takes longer is dropped. Default 5 s. */
  connectTimeoutMs?: number;
  /** A problem known before any request (readWorkerPassword's error): the worker stays unauthorized. */
  startError?: string;
};

const TIMED_OUT = new Error("timed out");

export class WorkerConnection {
  private current: WorkerHealth;
  private readonly clock: Clock;
  private started = false;
  private stopped = false;
  private checking?: Promise<WorkerHealth>;
  private healthTimer?: unknown;
  private stallTimer?: unknown;
  private stream?: AbortController;
  private backoff?: { timer: unknown; wake: () => void };
  private wakeEarly = false;
  private checkoutSeen = false;
  /** The current subscription has delivered its first event. */
  private streamOpen = false;

  constructor(
    private readonly worker: Pick<WorkerConfig, "name" | "url" | "directory">,
    private readonly link: WorkerLink,
    private readonly options: WorkerConnectionOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    const { startError } = options;
    this.current = startError ? { state: "unauthorized", since: this.clock.now(), error: startError } : { state: "unknown", since: this.clock.now() };
  }

  get health(): WorkerHealth {
    return { ...this.current };
  }

  /** Starts the health checks and the event stream; nothing happens for a worker with a start error. */
  start(): void {
    if (this.started || this.stopped || this.options.startError) return;
    this.started = true;
    void this.healthTick();
    void this.streamLoop();
  }

  /** Checks the worker now (joining a check in flight) and answers its health. */
  check(): Promise<WorkerHealth> {
    if (this.options.startError) return Promise.resolve(this.health);
    this.checking ??= this.probe().finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** Ends the checks and the stream; no timer is left. */
  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.healthTimer);
    this.clock.clearTimeout(this.stallTimer);
    this.stream?.abort();
    this.backoff?.wake();
  }

  private async healthTick(): Promise<void> {
    await this.check();
    if (!this.stopped) this.healthTimer = this.clock.setTimeout(() => void this.healthTick(), this.options.checkEveryMs ?? 5_000);
  }

  private async probe(): Promise<WorkerHealth> {
    const timeoutMs = this.options.checkTimeoutMs ?? 3_000;
    try {
      await this.timed(timeoutMs, (signal) => this.link.ping(signal));
      // OpenCode opens any directory it is given, even one that does not exist. Listing it the
      // first time takes a second or two, so it is checked until seen once, not on every recovery.
      this.checkoutSeen ||= await this.timed(timeoutMs, (signal) => this.link.checkoutExists(signal));
      if (this.checkoutSeen) this.setHealth("healthy");
      else this.setHealth("misconfigured", `worker "${this.worker.name}" cannot list ${this.worker.directory}: set "directory" to the project's checkout on that server`);
    } catch (error) {
      if (error instanceof WorkerUnauthorizedError) this.setHealth("unauthorized", error.message);
      else if (error === TIMED_OUT) this.setHealth("unreachable", `worker "${this.worker.name}" (${this.worker.url}) did not answer within ${timeoutMs / 1000} s`);
      else this.setHealth("unreachable", error instanceof Error ? error.message : String(error));
    }
    return this.health;
  }

  /** One call with its own deadline on the injected clock; rejects with TIMED_OUT past it. */
  private async timed<T>(ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = this.clock.setTimeout(() => controller.abort(TIMED_OUT), ms);
    try {
      return await call(controller.signal);
    } catch (error) {
      throw controller.signal.aborted ? TIMED_OUT : error;
    } finally {
      this.clock.clearTimeout(timer);
    }
  }

  private setHealth(state: WorkerHealthState, error?: string): void {
    if (this.stopped) return;
    if (state === this.current.state) {
      if (error) this.current.error = error;
      return;
    }
    const recovered = state === "healthy" && this.current.state !== "unknown";
    this.current = { state, since: this.clock.now(), ...(error ? { error } : {}) };
    if (recovered) this.wakeStream();
    this.safely("onHealth", () => this.options.onHealth?.(this.health));
  }

  private async streamLoop(): Promise<void> {
    const first = this.options.firstBackoffMs ?? 1_000;
    let delay = first;
    while (!this.stopped) {
      const delivered = await this.streamOnce();
      if (this.stopped) break;
      if (delivered) delay = first;
      void this.check(); // the stream ended: find out whether the worker did
      await this.sleep(delay);
      delay = Math.min(delay * 2, this.options.maxBackoffMs ?? 30_000);
    }
  }

  /** One subscription, until it ends, fails or stalls; true when it delivered anything. */
  private async streamOnce(): Promise<boolean> {
    const controller = new AbortController();
    this.stream = controller;
    let delivered = false;
    this.streamOpen = false;
    try {
      // A request sent while a server starts can hang without an answer: give up on it soon.
      this.armStall(controller, this.options.connectTimeoutMs ?? 5_000);
      for await (const raw of this.link.events(controller.signal)) {
        this.armStall(controller, this.options.stallMs ?? 30_000);
        if (!delivered && this.current.state !== "healthy") void this.check();
        delivered = this.streamOpen = true;
        this.safely("onEvent", () => this.options.onEvent?.(raw));
      }
    } catch (error) {
      if (!this.stopped) this.options.log?.("debug", `worker "${this.worker.name}": event stream ended: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.clock.clearTimeout(this.stallTimer);
      this.stream = undefined;
      controller.abort();
    }
    return delivered;
  }

  private armStall(controller: AbortController, ms: number): void {
    this.clock.clearTimeout(this.stallTimer);
    this.stallTimer = this.clock.setTimeout(() => controller.abort(), ms);
  }

  /** Waits before a reconnect; a worker found healthy again (or stop) ends the wait early. */
  private sleep(ms: number): Promise<void> {
    if (this.wakeEarly || this.stopped) {
      this.wakeEarly = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        this.clock.clearTimeout(this.backoff?.timer);
        this.backoff = undefined;
        resolve();
      };
      this.backoff = { timer: this.clock.setTimeout(wake, ms), wake };
    });
  }

  /** The worker is back: reconnect now, also when a subscription sent while it was starting hangs. */
  private wakeStream(): void {
    if (this.backoff) return this.backoff.wake();
    if (this.stream && this.streamOpen) return;
    this.wakeEarly = true;
    this.stream?.abort();
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.options.log?.("error", `worker "${this.worker.name}": ${what} threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

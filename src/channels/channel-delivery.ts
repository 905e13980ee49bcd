import { systemClock, type Clock } from "../core/clock.ts";
import { channelLabel, type Channels } from "./channel-config.ts";
import type { ChannelNotice } from "./channel-message.ts";
import { execOnce } from "./channel-exec.ts";
import { channelFormat } from "./formats/registry.ts";
import type { ChannelDeliveryStatus, ChannelOutboxRepository } from "../store/channel-outbox-repository.ts";
import type { OutboxItem } from "../store/leased-outbox.ts";
import { queuedDeliveries, storedNotice } from "./channel-queue.ts";
import { postOnce, type Fetch } from "./channel-post.ts";
import { DEFAULT_RETRY, nextStep, type AttemptOutcome, type RetryPolicy } from "./retry-policy.ts";

/** Nothing due here: look again this often, for rows a process that died left behind. */
const IDLE_CHECK_MS = 60_000;
/** A pass that failed (the database busy): try again after this long. */
const PASS_RETRY_MS = 5000;
const PURGE_EVERY_MS = 3_600_000;

export type ChannelDeliveryOptions = {
  /** The project's channel outbox, on the plugin's connection, so enqueue joins the run-end transaction. */
  outbox: ChannelOutboxRepository;
  /** The `channels` option. */
  channels: Channels;
  clock?: Clock;
  fetch?: Fetch;
  /** Gets only channel names and hosts, never a URL or secret. */
  log?: (message: string) => void;
  /** Called after a delivery ended (delivered or given up), outside any transaction. */
  onEnded?: (status: ChannelDeliveryStatus) => void;
  /** One attempt's limit, in ms. Default 10,000, range 100-60,000 (under the 30 s claim lease). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Attempts at once from this process. Default 8. */
  maxInFlight?: number;
  /** Delivered and failed rows are kept this long, in ms. Default 30 days. */
  keepMs?: number;
  /** The system requests are made for (formats that run a program differ). Default process.platform. */
  platform?: NodeJS.Platform;
};

/**
 * Sends finished runs' notices to the user's channels: durable (queued in the run-end
 * transaction), once per (run, channel) across processes (leased claims), retried with backoff
 * for up to 24 h, never in the run's way. One unref'd timer, set to the next due attempt.
 */
export class ChannelDelivery {
  readonly outbox: ChannelOutboxRepository;
  private clock: Clock;
  private policy: RetryPolicy;
  private timeoutMs: number;
  private maxInFlight: number;
  private running = false;
  private timer: unknown;
  private timerAt = Infinity;
  private inFlight = new Map<string, AbortController>();
  private idleWaiters: (() => void)[] = [];
  private lastPurge = -Infinity;
  /** Formats that cannot send from this system, already warned about in the log (once each). */
  private warned = new Set<string>();

  constructor(private opts: ChannelDeliveryOptions) {
    this.clock = opts.clock ?? systemClock;
    this.policy = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = Math.min(60_000, Math.max(100, opts.timeoutMs ?? 10_000));
    this.maxInFlight = opts.maxInFlight ?? 8;
    this.outbox = opts.outbox;
  }

  /**
   * Queues a finished run's notice for the named channels. Call inside the run-end transaction:
   * it commits with the run, and sending starts once the transaction is over. Never throws (a
   * failure is logged, the run is recorded as usual).
   */
  enqueue(notice: ChannelNotice, channelNames: readonly string[]): void {
    if (channelNames.length === 0) return;
    try {
      const run = { runId: notice.run.id, automationId: notice.automation.id };
      this.outbox.enqueue(run, queuedDeliveries(channelNames, this.opts.channels), storedNotice(notice), this.clock.now());
      this.wakeAt(this.clock.now());
    } catch (error) {
      this.log(`Could not queue run #${notice.run.no} of "${notice.automation.title}" for channels ${channelNames.join(", ")}: ${errorName(error)}`);
    }
  }

  /** Starts sending what is due (also what earlier processes left). */
  start(): void {
    this.running = true;
    this.wakeAt(this.clock.now());
  }

  /** Stops the timer and cuts off attempts in flight; their claims are let go, to be sent again. */
  stop(): void {
    this.running = false;
    this.clock.clearTimeout(this.timer);
    this.timerAt = Infinity;
    for (const [id, controller] of this.inFlight) {
      controller.abort();
      try {
        this.outbox.leased.release(id);
      } catch {
        // Left claimed: another process takes it over after the lease.
      }
    }
    this.inFlight.clear();
    this.settleIdle();
  }

  /** One run's deliveries, by channel name and host. */
  status(runId: number): ChannelDeliveryStatus[] {
    return this.outbox.status(runId);
  }

  /** Resolves when no attempt is in flight (at once if none is). */
  idle(): Promise<void> {
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeAt(at: number): void {
    if (!this.running || at >= this.timerAt) return;
    this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => {
      this.timerAt = Infinity;
      this.pass();
    }, Math.max(0, at - this.clock.now()));
  }

  /** Claims what is due and starts its attempts; then sets the timer to the next due one. */
  private pass(): void {
    if (!this.running) return;
    const now = this.clock.now();
    try {
      this.purge(now);
      const claimed = this.outbox.leased.claim(now, this.maxInFlight - this.inFlight.size, (item) => this.claimable(item, now));
      for (const item of claimed) void this.attempt(item);
      // All slots busy: the end of an attempt wakes the next pass (a timer now would spin).
      this.wakeAt(this.inFlight.size >= this.maxInFlight ? now + IDLE_CHECK_MS : this.nextDue(now));
    } catch (error) {
      this.log(`Channel delivery could not read its outbox (${errorName(error)}); trying again in ${PASS_RETRY_MS / 1000} s`);
      this.wakeAt(now + PASS_RETRY_MS);
    }
  }

  /** Ours to try: not in flight here, and a channel this process knows (or one nobody sent within the window). */
  private claimable(item: OutboxItem, now: number): boolean {
    if (this.inFlight.has(item.id)) return false;
    return this.opts.channels[String(item.row.channel)] !== undefined || now >= item.createdAt + this.policy.windowMs;
  }

  private nextDue(now: number): number {
    let next = now + IDLE_CHECK_MS;
    for (const item of this.outbox.leased.pending()) {
      if (this.inFlight.has(item.id)) continue;
      const known = this.opts.channels[String(item.row.channel)] !== undefined;
      const at = this.outbox.leased.claimableAt(item, now);
      next = Math.min(next, known ? at : Math.max(at, item.createdAt + this.policy.windowMs));
    }
    return next;
  }

  private async attempt(item: OutboxItem): Promise<void> {
    const controller = new AbortController();
    this.inFlight.set(item.id, controller);
    try {
      const outcome = await this.send(item, controller.signal);
      if (controller.signal.aborted || !this.running) return; // stopped: the claim was let go
      this.record(item, outcome);
    } catch (error) {
      this.log(`Channel ${String(item.row.channel)}: recording an attempt failed (${errorName(error)}); it is tried again`);
    } finally {
      if (this.inFlight.get(item.id) === controller) this.inFlight.delete(item.id);
      this.wakeAt(this.clock.now());
      this.settleIdle();
    }
  }

  private async send(item: OutboxItem, signal: AbortSignal): Promise<AttemptOutcome> {
    const name = String(item.row.channel);
    const config = this.opts.channels[name];
    if (!config) return { kind: "fail", reason: `channel "${name}" is not configured in the options of any OpenCode that ran within the retry window` };
    const notice = this.outbox.noticeOf(item) as ChannelNotice | undefined;
    if (!notice) return { kind: "fail", reason: "the stored notice is unreadable" };
    const format = channelFormat(config.format);
    if (!format) return { kind: "fail", reason: `format "${config.format}" is not known to this version` };
    const request = format.request(notice, config, { deliveryId: item.id, now: this.clock.now(), platform: this.opts.platform ?? process.platform });
    if (request.kind === "http") return postOnce(this.opts.fetch ?? fetch, request, this.timeoutMs, signal, () => this.clock.now());
    if (request.kind === "exec") return execOnce(request, this.timeoutMs, signal);
    this.warnOnce(config.format, request.reason);
    return { kind: "fail", reason: request.reason, quiet: true };
  }

  private warnOnce(format: string, reason: string): void {
    if (this.warned.has(format)) return;
    this.warned.add(format);
    this.log(`Channels of format "${format}": ${reason}`);
  }

  private record(item: OutboxItem, outcome: AttemptOutcome): void {
    const now = this.clock.now();
    const step = nextStep(outcome, item, now, this.policy);
    const { leased } = this.outbox;
    if (step.kind === "retry") {
      leased.retryAt(item.id, step.at, step.reason);
      return;
    }
    const ended = step.kind === "confirm" ? leased.confirm(item.id, now) : leased.fail(item.id, now, step.reason);
    if (!ended) return; // another process took it over: it records the outcome
    const name = String(item.row.channel);
    if (step.kind === "fail" && !(outcome.kind === "fail" && outcome.quiet)) this.log(`Channel ${channelLabel(name, this.opts.channels[name])}: gave up on ${runName(this.outbox.noticeOf(item) as ChannelNotice | undefined, item)}: ${step.reason}`);
    const status = this.outbox.status(Number(item.row.run_id)).find((s) => s.channel === name);
    if (status) this.notifyEnded(status);
  }

  private notifyEnded(status: ChannelDeliveryStatus): void {
    try {
      this.opts.onEnded?.(status);
    } catch (error) {
      this.log(`A channel delivery listener failed: ${errorName(error)}`);
    }
  }

  private purge(now: number): void {
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    this.outbox.purgeEnded(now - (this.opts.keepMs ?? 30 * 86_400_000));
  }

  private settleIdle(): void {
    if (this.inFlight.size > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private log(message: string): void {
    try {
      this.opts.log?.(message);
    } catch {
      // A logger that throws must not stop delivery.
    }
  }
}

/** `run #3 of "Nightly tests"`, or the run's row id when the notice is unreadable. */
function runName(notice: ChannelNotice | undefined, item: OutboxItem): string {
  return notice ? `run #${notice.run.no} of "${notice.automation.title}"` : `run ${String(item.row.run_id)}`;
}

/** An error's class and code, never its message (a driver's message can quote SQL or a URL). */
function errorName(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown } | undefined;
  const code = typeof e?.code === "string" ? ` ${e.code}` : "";
  return `${typeof e?.name === "string" ? e.name : "error"}${code}`;
}

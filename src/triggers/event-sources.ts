import { LEASES } from "../core/claims.ts";
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import type { Trigger } from "../automations/automation.ts";
import { EVENT_KINDS, kindOf } from "./kinds/registry.ts";
import type { TriggerRepository } from "../store/trigger-repository.ts";
import type { RunningSource, SourceContext, StartSource, TriggerEvent, UpstreamRun } from "./trigger-source.ts";
import type { FireResult, SourceLoaders, WebhookListener } from "./source-loaders.ts";
import { WebhookDeliveries } from "./webhook-deliveries.ts";

/** How long a lease lasts without renewal: a process that died without releasing is replaced after this. */
export const LEASE_MS = LEASES.triggerMs;
/** While event triggers exist: leases renewed, deliveries fired, sources started and stopped at this pace. */
export const TICK_MS = 2000;
const RENEW_EVERY_MS = 5000;
const LISTEN_RETRY_MS = 10_000;

export type EventSourcesDeps = {
  store: TriggerRepository;
  /** This plugin instance's name in trigger leases and delivery claims (core/claims.ts). */
  holder: string;
  directory: string;
  clock: Clock;
  loaders: SourceLoaders;
  /** Fires the trigger's automation once; undefined when it did not fire (paused, gone). */
  fire(triggerId: string, event: TriggerEvent): FireResult | undefined;
  /** A skipped row in the automation's history (e.g. an expired webhook delivery). */
  recordSkip(triggerId: string, summary: string, reason: string): void;
  /** Ends a run a crash cut off before it launched (its event is fired again). */
  abandonRun(runId: number): void;
  ownWrites(automationId: string): ReadonlySet<string>;
  /** Chained (`after`) triggers read an upstream automation's runs here; absent: they cannot start. */
  runsAfter?(automationId: string, afterRunId: number): UpstreamRun[];
  log(level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>): void;
  webhook: { host: string; port: number };
};

type Started = { trigger: Trigger; source: Promise<RunningSource | undefined> };

/**
 * Runs the sources of this project's event triggers: each watcher or poller in one process at a
 * time (a lease per trigger in the database, taken over when its holder dies), the one webhook
 * listener of the machine when this project has webhooks, and the webhook deliveries waiting
 * for this project. With no event trigger it holds no timer, no listener, and loads nothing.
 */
export class EventSources {
  private started = new Map<string, Started>();
  private timer: unknown;
  private lastRenew = 0;
  private listener: WebhookListener | undefined;
  private listening: Promise<void> | undefined;
  private lastListenTry = 0;
  private stopped = false;
  readonly deliveries: WebhookDeliveries;

  get store(): TriggerRepository {
    return this.deps.store;
  }

  get directory(): string {
    return this.deps.directory;
  }

  /** The URL a webhook of this name is served at. */
  webhookUrl(name: string): string {
    const { host, port } = this.deps.webhook;
    return `http://${host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host}:${port}/hooks/${name}`;
  }

  constructor(private deps: EventSourcesDeps) {
    this.deliveries = new WebhookDeliveries(deps);
  }

  /** Brings sources, leases, the listener and the tick in line with the project's event triggers. Never throws. */
  sync(): void {
    if (this.stopped) return;
    try {
      const triggers = this.deps.store.activeEventTriggers(EVENT_KINDS);
      if (triggers.length === 0 && this.started.size === 0 && !this.listener) return this.clearTimer();
      this.syncSources(triggers.filter((t) => kindOf(t.spec).start !== undefined));
      this.syncListener(triggers.some((t) => t.spec.kind === "webhook"));
      this.deliveries.fireDue();
      this.armTick(triggers.length > 0 || this.started.size > 0);
    } catch (error) {
      this.deps.log("error", "Event triggers could not be brought up to date; retrying at the next tick", { error: errorMessage(error) });
      this.armTick(true);
    }
  }

  /** Stops every source and the listener, and gives the leases back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    const all = [...this.started.keys()];
    await Promise.all(all.map((id) => this.stopSource(id)));
    await this.closeListener();
  }

  /** Trigger ids whose source runs in this process (for tests and the dashboard). */
  runningHere(): string[] {
    return [...this.started.keys()];
  }

  private syncSources(triggers: Trigger[]): void {
    const { store, clock } = this.deps;
    const now = clock.now();
    const wanted = new Set(triggers.map((t) => t.id));
    const held = now - this.lastRenew >= RENEW_EVERY_MS ? this.renew(now) : undefined;
    for (const id of this.started.keys()) {
      if (!wanted.has(id) || (held && !held.has(id))) void this.stopSource(id);
    }
    for (const trigger of triggers) {
      if (this.started.has(trigger.id)) continue;
      if (store.acquireLease(trigger.id, this.deps.holder, now, LEASE_MS)) this.startSource(trigger);
    }
  }

  private renew(now: number): Set<string> {
    this.lastRenew = now;
    return this.deps.store.renewLeases(this.deps.holder, now, LEASE_MS);
  }

  private startSource(trigger: Trigger): void {
    const spec = trigger.spec;
    const ctx = this.sourceContext(trigger);
    const load = this.deps.loaders[spec.kind] ?? (() => Promise.reject(new Error(`no source for the kind "${spec.kind}"`)));
    const source = load()
      .then((start) => (start as StartSource<typeof spec>)(spec, ctx))
      .catch((error) => {
        const message = `could not start: ${errorMessage(error)}`;
        this.deps.log("error", `Trigger ${trigger.id} (${spec.kind}) ${message}`);
        this.deps.store.setNote(trigger.id, message);
        return undefined;
      });
    this.started.set(trigger.id, { trigger, source });
  }

  private async stopSource(id: string): Promise<void> {
    const started = this.started.get(id);
    if (!started) return;
    this.started.delete(id);
    try {
      await (await started.source)?.stop();
    } catch (error) {
      this.deps.log("warn", `Stopping the source of trigger ${id} failed`, { error: errorMessage(error) });
    }
    try {
      this.deps.store.releaseLease(id, this.deps.holder);
    } catch {
      // The lease expires by itself.
    }
  }

  private sourceContext(trigger: Trigger): SourceContext {
    const { store, clock, directory, log } = this.deps;
    const guard = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (error) {
        log("error", `Trigger ${trigger.id}: ${what} failed`, { error: errorMessage(error) });
      }
    };
    return {
      directory,
      clock,
      log,
      emit: (event) => guard("firing", () => {
        if (this.started.has(trigger.id)) this.deps.fire(trigger.id, event);
      }),
      loadState: () => store.state(trigger.id),
      saveState: (state) => guard("saving its state", () => store.saveState(trigger.id, state)),
      setNote: (note) => guard("saving its note", () => store.setNote(trigger.id, note)),
      ownWrites: () => this.deps.ownWrites(trigger.automationId),
      createdAt: trigger.createdAt,
      ...(this.deps.runsAfter ? { runsAfter: this.deps.runsAfter } : {}),
    };
  }

  private syncListener(wanted: boolean): void {
    if (!wanted) {
      void this.closeListener();
      return;
    }
    const now = this.deps.clock.now();
    if (this.listener || this.listening || now - this.lastListenTry < LISTEN_RETRY_MS) return;
    this.lastListenTry = now;
    this.listening = this.listen().finally(() => (this.listening = undefined));
  }

  private async listen(): Promise<void> {
    const { loaders, webhook, log } = this.deps;
    const start = await loaders.webhookListener();
    const result = await start({
      ...webhook, log, lookup: (name) => this.deliveries.secretOf(name), accept: (delivery) => this.deliveries.accept(delivery),
      seen: (delivery) => this.deliveries.seen(delivery),
    });
    if (!result.listening) {
      log("info", `Webhooks: another process serves ${webhook.host}:${webhook.port} (${result.reason}); deliveries it stores are fired here`);
      return;
    }
    if (this.stopped) return void (await result.close());
    this.listener = result;
    log("info", `Webhooks listening on ${result.url}`);
  }

  private async closeListener(): Promise<void> {
    await this.listening;
    const listener = this.listener;
    this.listener = undefined;
    await listener?.close().catch(() => undefined);
  }

  private armTick(wanted: boolean): void {
    if (!wanted || this.stopped) return this.clearTimer();
    if (this.timer !== undefined) return;
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = undefined;
      this.sync();
    }, TICK_MS);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

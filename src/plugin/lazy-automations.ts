import type { Automations } from "../automations/automation-layer.ts";
import type { Clock } from "../core/clock.ts";

/** The automation layer once built: its service, and how to start and stop all of it (scheduler, sources, channels, discovery). */
export type AutomationLayer = { service: Automations; start(): void; stop(): void };

type Deps = {
  /** Imports and builds the layer (not started). */
  build: () => Promise<AutomationLayer>;
  /** A cheap look at the store: does the project have an automation or a proposal (or is discovery on)? */
  wanted: () => boolean;
  onCrash: (message: string, error: unknown) => void;
  clock: Clock;
  /** How often a process without the layer looks again (another process may have created an automation). */
  recheckMs?: number;
};

const RECHECK_MS = 60_000;

/**
 * The automation layer, loaded only when the project has use for it: every OpenCode process pays
 * for what the plugin imports, and most projects have no automation. At start it is built when the
 * store holds an automation or a proposal; otherwise at the first task_* call, or when another
 * process has created one (looked for once a minute).
 */
export class LazyAutomations {
  private building: Promise<AutomationLayer> | undefined;
  private layer: AutomationLayer | undefined;
  private started = false;
  private stopped = false;
  private timer: unknown;

  constructor(private readonly deps: Deps) {}

  /** Before the core starts: builds the layer if the project has use for it, so that it hears the core's recovered settles. */
  async prepare(): Promise<void> {
    if (this.wanted()) await this.build().catch((error) => this.deps.onCrash("Automations could not start; background tasks work without them", error));
  }

  /** After the core started: starts the layer if it was built, else looks again now and then. */
  start(): void {
    this.started = true;
    if (this.stopped) return;
    if (this.layer) return this.layer.start();
    this.lookAgainLater();
  }

  stop(): void {
    this.stopped = true;
    this.deps.clock.clearTimeout(this.timer);
    this.layer?.stop();
  }

  /** The layer's service if this process has built it; never loads. */
  loaded(): Automations | undefined {
    return this.layer?.service;
  }

  /** The service, building and starting the layer first if needed. Rejects when it cannot start. */
  async load(): Promise<Automations> {
    const layer = await this.build();
    return layer.service;
  }

  /** The service if the project has an automation or a proposal (built then), else undefined. */
  async ifWanted(): Promise<Automations | undefined> {
    return this.layer || this.wanted() ? this.load() : undefined;
  }

  private lookAgainLater(): void {
    this.timer = this.deps.clock.setTimeout(() => {
      if (this.stopped || this.layer) return;
      if (this.wanted()) void this.load().catch((error) => this.deps.onCrash("Automations could not start", error));
      this.lookAgainLater();
    }, this.deps.recheckMs ?? RECHECK_MS);
  }

  private wanted(): boolean {
    try {
      return this.deps.wanted();
    } catch (error) {
      this.deps.onCrash("Could not look for automations in the store", error);
      return false;
    }
  }

  private build(): Promise<AutomationLayer> {
    if (this.building) return this.building;
    const building = this.deps.build().then((layer) => {
      if (this.stopped) {
        layer.stop();
        throw new Error("the plugin was disposed while automations were loading");
      }
      this.layer = layer;
      this.deps.clock.clearTimeout(this.timer);
      if (this.started) layer.start();
      return layer;
    });
    this.building = building;
    // A failed build is tried again at the next need.
    building.catch(() => {
      if (this.building === building) this.building = undefined;
    });
    return building;
  }
}

import type { Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Host, HostEvent } from "../host/host.ts";
import type { Route } from "../host/routed-host.ts";
import { normalizeEvent } from "../host/normalize-event.ts";
import type { FileReader } from "../evidence/evidence-types.ts";
import type { Task } from "../core/task.ts";
import { readWorkerPassword, type WorkerConfig } from "./worker-config.ts";
import { createRemoteHost, remoteClientFor } from "./remote-host.ts";
import { WorkerConnection, type WorkerHealth } from "./worker-connection.ts";
import { workerRoute } from "./worker-route.ts";
import { WorkerPlacement } from "./worker-placement.ts";
import { WorkerSupervisor } from "./worker-supervisor.ts";
import type { WorkerHealthRepository } from "../store/worker-health-repository.ts";
import type { WorkerLink } from "./worker-link.ts";

export type WorkersDeps = {
  local: Host; clock: Clock; graceMs: number;
  /** Where each worker's health is written for the dashboard. */
  health: WorkerHealthRepository;
  forkLimits: { toolOutputLimit: number; tokenCap: number };
  log: (message: string, error: unknown) => void;
  /**
   * The task core. It is built after the workers (it talks through their route and asks
   * their placement), so it is reached through this function, which is called only once the plugin runs.
   */
  core: () => TaskManager;
  /** A worker's event, as the local server's events are heard (the core and the evidence hooks). */
  onEvent: (event: HostEvent) => void;
};

/**
 * The configured workers, wired: a link (host, health, files) and a connection (health checks,
 * event stream) each, the route of their sessions (plugin.ts puts the core's RoutedHost on it),
 * the placement it asks, and the supervisor of unreachable ones. `start` once the core has started.
 */
export class Workers {
  readonly links = new Map<string, WorkerLink>();
  readonly route: Route;
  readonly placement: WorkerPlacement;
  private connections = new Map<string, WorkerConnection>();
  private configs = new Map<string, WorkerConfig>();
  private supervisor: WorkerSupervisor;
  private health: WorkerHealthRepository;

  constructor(configs: WorkerConfig[], private deps: WorkersDeps) {
    this.health = deps.health;
    for (const config of configs) this.add(config);
    this.route = workerRoute(this.links, {
      workerOf: (sessionID) => deps.core().get(sessionID)?.worker,
      runningOn: (worker) => deps.core().activeTasks().filter((t) => t.worker === worker).map((t) => t.id),
    });
    this.placement = new WorkerPlacement(deps.local, this.links, deps.forkLimits);
    this.supervisor = new WorkerSupervisor(deps.core, deps.clock, deps.graceMs, deps.log);
  }

  start(): void {
    this.safely("Could not record the workers", () => this.health.keepOnly([...this.links.keys()]));
    for (const connection of this.connections.values()) connection.start();
  }

  stop(): void {
    for (const connection of this.connections.values()) connection.stop();
    this.supervisor.stop();
  }

  /** Where a task's files are read: its worker's checkout, through the worker's API. */
  filesOf(task: Pick<Task, "worker">): FileReader | undefined {
    const link = task.worker ? this.links.get(task.worker) : undefined;
    return link && ((path) => link.fileContent(path));
  }

  private add(config: WorkerConfig): void {
    const client = remoteClientFor(config);
    const connection = new WorkerConnection(config, client, {
      startError: readWorkerPassword(config).error,
      clock: this.deps.clock,
      onEvent: (raw) => this.heard(raw),
      onHealth: (health) => this.healthChanged(link, health),
      log: (level, message) => void this.deps.local.log(level, message, { worker: config.name }).catch(() => undefined),
    });
    const link: WorkerLink = {
      name: config.name, capacity: config.capacity, host: createRemoteHost(config, this.deps.local, client),
      health: () => connection.health, fileContent: (path) => client.fileContent(path),
    };
    this.links.set(config.name, link);
    this.connections.set(config.name, connection);
    this.configs.set(config.name, config);
    this.safely("Could not record a worker's health", () => this.saveHealth(config.name, connection.health));
  }

  private heard(raw: unknown): void {
    const type = (raw as { type?: string } | undefined)?.type;
    // The stream does not replay what it missed while reconnecting: a poll catches up.
    if (type === "server.connected") return void this.deps.core().poll().catch((error) => this.deps.log("A poll after a worker reconnected failed", error));
    const event = normalizeEvent(raw);
    if (event) this.safely("A worker's event could not be handled", () => this.deps.onEvent(event));
  }

  private healthChanged(link: WorkerLink, health: WorkerHealth): void {
    this.safely("Could not record a worker's health", () => this.saveHealth(link.name, health));
    if (health.state === "unauthorized" || health.state === "misconfigured") {
      const message = `Worker "${link.name}" is ${health.state}: ${health.error ?? "no details"}. Other workers are not affected.`;
      void this.deps.local.log("error", message).catch(() => undefined);
      void this.deps.local.toast({ title: "Background tasks", message, variant: "error" }).catch(() => undefined);
    }
    this.safely("Could not act on a worker's health", () => this.supervisor.healthChanged(link, health));
  }

  private saveHealth(name: string, health: WorkerHealth): void {
    const config = this.configs.get(name)!;
    this.health.save({
      name, host: hostOf(config.url), capacity: config.capacity, state: health.state, since: health.since,
      ...(health.error ? { error: health.error } : {}), checkedAt: this.deps.clock.now(),
    });
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.deps.log(what, error);
    }
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "?";
  }
}

import type { Host } from "../host/host.ts";
import type { WorkerHealth } from "./worker-connection.ts";

export type { WorkerHealth };

/** What the routing and placement need of one worker: its name, capacity, host and health. */
export type WorkerLink = {
  name: string;
  capacity: number;
  /** The worker's OpenCode as a Host (log and toast go to the local one). */
  host: Host;
  health(): WorkerHealth;
  /** A file of the worker's checkout, through its API; undefined when it does not exist. */
  fileContent(path: string): Promise<string | undefined>;
};

export function isHealthy(link: WorkerLink): boolean {
  return link.health().state === "healthy";
}

/** "unreachable since 14:02:10 (connect ECONNREFUSED)" for answers and notes. */
export function healthText(health: WorkerHealth): string {
  const since = new Date(health.since).toISOString().slice(11, 19);
  if (health.state === "healthy") return "healthy";
  if (health.state === "unknown") return "not checked yet";
  return `${health.state} since ${since} UTC${health.error ? ` (${health.error})` : ""}`;
}

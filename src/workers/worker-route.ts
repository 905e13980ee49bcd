import type { SessionActivity } from "../host/host.ts";
import type { Route } from "../host/routed-host.ts";
import { isHealthy, type WorkerLink } from "./worker-link.ts";

/** Which worker runs a session (undefined: this OpenCode), and the running tasks on a worker. */
export type WorkerRoutes = { workerOf(sessionID: string): string | undefined; runningOn(worker: string): string[] };

/**
 * The route of sessions that run on a worker: a call about one goes to the worker's server. New
 * sessions stay local (the placement creates a worker's sessions on it). A worker that does not
 * answer has its running children reported busy, so nothing is judged finished while it is away.
 */
export function workerRoute(workers: ReadonlyMap<string, WorkerLink>, routes: WorkerRoutes): Route {
  return {
    hostOf: (sessionID) => {
      const worker = routes.workerOf(sessionID);
      if (worker === undefined) return undefined;
      const link = workers.get(worker);
      if (!link) throw new Error(`Worker "${worker}" is no longer configured (plugin option "workers").`);
      return link.host;
    },
    statuses: () => workerStatuses(workers, routes),
  };
}

/** One call per worker that runs something; a worker's children are held (busy) while it is unhealthy or does not answer. */
async function workerStatuses(workers: ReadonlyMap<string, WorkerLink>, routes: WorkerRoutes): Promise<Record<string, SessionActivity>> {
  const all: Record<string, SessionActivity> = {};
  await Promise.all([...workers.values()].map(async (link) => {
    const running = routes.runningOn(link.name);
    if (running.length === 0) return;
    const remote = isHealthy(link) ? await link.host.statuses().catch(() => undefined) : undefined;
    if (remote) return void Object.assign(all, remote);
    for (const id of running) all[id] = "busy";
  }));
  return all;
}

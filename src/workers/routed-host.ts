import type { Host, HostMessage, PromptInput, SessionActivity } from "../host/host.ts";
import type { ForkMessage } from "../fork/fork-types.ts";
import { isHealthy, type WorkerLink } from "./worker-link.ts";

/** Which worker runs a session (undefined: this OpenCode), and the running tasks on a worker. */
export type Routes = { workerOf(sessionID: string): string | undefined; runningOn(worker: string): string[] };

/**
 * The core's one Host when workers are configured: a call about a session goes to the server that
 * runs it; new sessions, agents, logs and toasts are this OpenCode's. A worker that does not answer
 * has its running children reported busy, so nothing is judged finished while it is away.
 */
export class RoutedHost implements Host {
  constructor(private local: Host, private workers: ReadonlyMap<string, WorkerLink>, private routes: Routes) {}

  private on(sessionID: string): Host {
    const worker = this.routes.workerOf(sessionID);
    const link = worker === undefined ? undefined : this.workers.get(worker);
    if (worker !== undefined && !link) throw new Error(`Worker "${worker}" is no longer configured (plugin option "workers").`);
    return link?.host ?? this.local;
  }

  createSession(input: { parentID?: string; title: string }) { return this.local.createSession(input); }
  forkSession(input: { sessionID: string; messageID?: string; title: string }) { return this.local.forkSession(input); }
  sessionExists(sessionID: string) { return this.on(sessionID).sessionExists(sessionID); }
  prompt(input: PromptInput) { return this.on(input.sessionID).prompt(input); }
  abort(sessionID: string) { return this.on(sessionID).abort(sessionID); }
  recentMessages(sessionID: string, limit: number): Promise<HostMessage[]> { return this.on(sessionID).recentMessages(sessionID, limit); }
  sessionHistory(sessionID: string): Promise<ForkMessage[]> { return this.on(sessionID).sessionHistory(sessionID); }
  agents() { return this.local.agents(); }
  listSessions() { return this.local.listSessions(); }
  toast(input: Parameters<Host["toast"]>[0]) { return this.local.toast(input); }
  log(...args: Parameters<Host["log"]>) { return this.local.log(...args); }

  /** One call per server that runs something; a worker's children are held (busy) while it is unhealthy or does not answer. */
  async statuses(): Promise<Record<string, SessionActivity>> {
    const all = { ...(await this.local.statuses()) };
    await Promise.all([...this.workers.values()].map(async (link) => {
      const running = this.routes.runningOn(link.name);
      if (running.length === 0) return;
      const remote = isHealthy(link) ? await link.host.statuses().catch(() => undefined) : undefined;
      if (remote) return void Object.assign(all, remote);
      for (const id of running) all[id] = "busy";
    }));
    return all;
  }
}

import type { ForkMessage } from "../fork/fork-types.ts";
import type { Host, HostMessage, PromptInput, SessionActivity } from "./host.ts";

/**
 * Where a RoutedHost sends what is not the local host's: the sessions placed elsewhere (on a
 * worker, in a worktree's directory) and the statuses of the hosts in use.
 */
export type Route = {
  /** The host of a session's calls; undefined: the local host. May throw an Error that names the fix. */
  hostOf(sessionID: string): Host | undefined;
  /** The host of a new session asked for in `directory`; undefined or absent: the local host. */
  hostIn?(directory: string): Host | undefined;
  /** The statuses of this route's hosts in use, laid over the local host's. A host that does not answer is the route's to account for. */
  statuses(): Promise<Record<string, SessionActivity>>;
};

/**
 * A Host whose calls about a session go to the host its route names, the local host otherwise.
 * New sessions go where their directory's route says (else here); agents, the session list,
 * logs and toasts are always the local host's. Routes nest: the workers' router wraps the
 * worktree directories' one, built in src/plugin.ts.
 */
export class RoutedHost implements Host {
  constructor(private local: Host, private route: Route) {}

  private on(sessionID: string): Host {
    return this.route.hostOf(sessionID) ?? this.local;
  }

  private in(directory: string | undefined): Host {
    return (directory && this.route.hostIn?.(directory)) || this.local;
  }

  // async: a route that refuses (throws) rejects the call, as the Host contract asks.
  async createSession(input: Parameters<Host["createSession"]>[0]) { return this.in(input.directory).createSession(input); }
  async forkSession(input: Parameters<Host["forkSession"]>[0]) { return this.in(input.directory).forkSession(input); }
  async sessionExists(sessionID: string) { return this.on(sessionID).sessionExists(sessionID); }
  async prompt(input: PromptInput) { return this.on(input.sessionID).prompt(input); }
  async abort(sessionID: string) { return this.on(sessionID).abort(sessionID); }
  async recentMessages(sessionID: string, limit: number): Promise<HostMessage[]> { return this.on(sessionID).recentMessages(sessionID, limit); }
  async sessionHistory(sessionID: string): Promise<ForkMessage[]> { return this.on(sessionID).sessionHistory(sessionID); }
  agents() { return this.local.agents(); }
  listSessions() { return this.local.listSessions(); }
  toast(input: Parameters<Host["toast"]>[0]) { return this.local.toast(input); }
  log(...args: Parameters<Host["log"]>) { return this.local.log(...args); }

  /** The local host's statuses (its failure fails the poll) with the route's laid over them. */
  async statuses(): Promise<Record<string, SessionActivity>> {
    const [local, routed] = await Promise.all([this.local.statuses(), this.route.statuses()]);
    return { ...local, ...routed };
  }
}

import type { ForkMessage } from "../fork/fork-types.ts";
import type { Host, HostMessage, PromptInput, SessionActivity } from "./host.ts";

/** Where each session works: a worktree's directory, or undefined for this instance's own. */
export type DirectoryRoutes = {
  directoryOf(sessionID: string): string | undefined;
  /** The directories whose sessions run now (their statuses are asked for too). */
  directoriesInUse(): string[];
};

/**
 * A Host whose calls about a session go to the OpenCode instance of the session's directory:
 * a session created in a worktree is answered there (its status is not in the main directory's).
 */
export class DirectoryHost implements Host {
  constructor(private local: Host, private hostFor: (directory: string) => Host, private routes: DirectoryRoutes) {}

  private in(directory: string | undefined): Host {
    // A host per call: it is a few closures on the same client, and worktrees come and go.
    return directory ? this.hostFor(directory) : this.local;
  }

  private on(sessionID: string): Host {
    return this.in(this.routes.directoryOf(sessionID));
  }

  createSession(input: { parentID?: string; title: string; directory?: string }) { return this.in(input.directory).createSession(input); }
  forkSession(input: { sessionID: string; messageID?: string; title: string; directory?: string }) { return this.in(input.directory).forkSession(input); }
  sessionExists(sessionID: string) { return this.on(sessionID).sessionExists(sessionID); }
  prompt(input: PromptInput) { return this.on(input.sessionID).prompt(input); }
  abort(sessionID: string) { return this.on(sessionID).abort(sessionID); }
  recentMessages(sessionID: string, limit: number): Promise<HostMessage[]> { return this.on(sessionID).recentMessages(sessionID, limit); }
  sessionHistory(sessionID: string): Promise<ForkMessage[]> { return this.on(sessionID).sessionHistory(sessionID); }
  agents() { return this.local.agents(); }
  listSessions() { return this.local.listSessions(); }
  toast(input: Parameters<Host["toast"]>[0]) { return this.local.toast(input); }
  log(...args: Parameters<Host["log"]>) { return this.local.log(...args); }

  /**
   * This directory's statuses and those of every directory in use, in one call each. A worktree
   * directory that does not answer (removed under a running task) leaves its sessions out: they
   * count as idle, and their messages decide, instead of the whole poll failing.
   */
  async statuses(): Promise<Record<string, SessionActivity>> {
    const directories = [...new Set(this.routes.directoriesInUse())];
    const others = directories.map((d) => this.in(d).statuses().catch(() => ({})));
    const all = await Promise.all([this.local.statuses(), ...others]);
    return Object.assign({}, ...all);
  }
}

import type { Host, SessionActivity } from "./host.ts";
import type { Route } from "./routed-host.ts";

/** Where each session works: a worktree's directory, or undefined for this instance's own. */
export type DirectoryRoutes = {
  directoryOf(sessionID: string): string | undefined;
  /** The directories whose sessions run now (their statuses are asked for too). */
  directoriesInUse(): string[];
};

/**
 * The route of sessions that work in a worktree: a session created in a worktree's directory is
 * answered by the OpenCode instance of that directory (its status is not in the main directory's).
 * `hostFor` is called per call: a host is a few closures on the same client, and worktrees come and go.
 */
export function directoryRoute(hostFor: (directory: string) => Host, routes: DirectoryRoutes): Route {
  return {
    hostOf: (sessionID) => {
      const directory = routes.directoryOf(sessionID);
      return directory ? hostFor(directory) : undefined;
    },
    hostIn: hostFor,
    statuses: () => directoryStatuses(hostFor, routes.directoriesInUse()),
  };
}

/**
 * Every directory in use, in one call each. A worktree directory that does not answer (removed
 * under a running task) leaves its sessions out: they count as idle, and their messages decide,
 * instead of the whole poll failing.
 */
async function directoryStatuses(hostFor: (directory: string) => Host, inUse: string[]): Promise<Record<string, SessionActivity>> {
  const all = await Promise.all([...new Set(inUse)].map((d) => hostFor(d).statuses().catch(() => ({}))));
  return Object.assign({}, ...all);
}

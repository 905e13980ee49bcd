/**
 * The Host for a worker: the same adapter as for the local server, on the worker's client.
 * Logs and toasts go to the local host (the user watches their own OpenCode), and fork is
 * refused: the core copies the parent's messages into a new session on the worker itself.
 */
import type { Host } from "../host/host.ts";
import { createOpencodeHost } from "../host/opencode-host.ts";
import { createRemoteClient, WorkerUnauthorizedError, WorkerUnreachableError, type RemoteClient } from "./remote-client.ts";
import { readWorkerPassword, type WorkerConfig } from "./worker-config.ts";

type AdapterClient = Parameters<typeof createOpencodeHost>[0];

/** The worker's client, with the password read from the worker's environment variable. */
export function remoteClientFor(worker: WorkerConfig, env: NodeJS.ProcessEnv = process.env, doFetch?: typeof fetch): RemoteClient {
  const { password } = readWorkerPassword(worker, env);
  const { name, url, username, passwordEnv, directory } = worker;
  return createRemoteClient({ name, url, username, password, passwordEnv, directory, fetch: doFetch });
}

export function createRemoteHost(worker: WorkerConfig, local: Host, client: RemoteClient = remoteClientFor(worker)): Host {
  const remote = createOpencodeHost(client as unknown as AdapterClient);
  const named = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => (...args: A) => call(...args).catch((e: unknown) => Promise.reject(onWorker(worker.name, e)));
  return {
    createSession: named(remote.createSession),
    forkSession: async () => {
      throw new Error(`worker "${worker.name}" cannot fork a session of this server: copy the parent's messages into a new session there instead`);
    },
    sessionExists: named(remote.sessionExists),
    prompt: named(remote.prompt),
    abort: named(remote.abort),
    statuses: named(remote.statuses),
    recentMessages: named(remote.recentMessages),
    sessionHistory: named(remote.sessionHistory),
    agents: named(remote.agents),
    listSessions: named(remote.listSessions),
    toast: (input) => local.toast(input),
    log: (level, message, extra) => local.log(level, message, { worker: worker.name, ...extra }),
  };
}

/** The adapter says "OpenCode refused to …": say which OpenCode. Worker errors name it already. */
function onWorker(name: string, error: unknown): unknown {
  if (error instanceof WorkerUnauthorizedError || error instanceof WorkerUnreachableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`worker "${name}": ${message}`, { cause: error });
}

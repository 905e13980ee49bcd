import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { parseOptions, type Options } from "./options.ts";
import { systemClock } from "./core/clock.ts";
import { errorMessage } from "./core/errors.ts";
import { TaskManager } from "./core/task-manager.ts";
import { createOpencodeHost } from "./host/opencode-host.ts";
import { normalizeEvent } from "./host/normalize-event.ts";
import type { Host } from "./host/host.ts";
import { buildTools } from "./tools/build-tools.ts";
import { createForkSupport } from "./fork/fork-preparer.ts";
import { ForkContextTransform } from "./fork/fork-context-transform.ts";
import type { ForkMessage } from "./fork/fork-types.ts";
import { SqliteTaskStore } from "./store/sqlite-task-store.ts";
import { defaultDbPath } from "./store/default-db-path.ts";

const DAY_MS = 86_400_000;

/** The plugin: wires the host adapter, the store and the task core, and registers the tools. */
export async function backgroundTasksPlugin(input: PluginInput, rawOptions?: unknown): Promise<Hooks> {
  const host = createOpencodeHost(input.client);
  const onCrash = (message: string, error: unknown) => logError(host, message, error);
  let options: Options;
  let store: SqliteTaskStore;
  try {
    options = parseOptions(rawOptions);
    store = SqliteTaskStore.open({ path: options.dbPath || defaultDbPath(), projectId: input.project?.id ?? input.directory });
  } catch (error) {
    onCrash("opencode-background-tasks could not start", error);
    return { tool: buildTools({ unavailable: errorMessage(error) }) };
  }
  store.purgeOlderThan(Date.now() - options.retentionDays * DAY_MS);
  const forkLimits = { toolOutputLimit: options.forkToolOutputLimit, tokenCap: options.forkTokenCap };
  const manager = new TaskManager(host, store, systemClock, options, createForkSupport(host, forkLimits));
  const forkTransform = new ForkContextTransform(forkLimits);
  void manager.start();
  return {
    tool: buildTools({ manager, clock: systemClock, options, onCrash }),
    event: async ({ event }) => {
      try {
        const normalized = normalizeEvent(event);
        if (normalized) manager.handleEvent(normalized);
      } catch (error) {
        onCrash("Event handling failed", error);
      }
    },
    "experimental.chat.messages.transform": async (_input, output) => {
      try {
        forkTransform.apply(output.messages as unknown as ForkMessage[]);
      } catch (error) {
        onCrash("Fork context processing failed; the request went out unprocessed", error);
      }
    },
  };
}

function logError(host: Host, message: string, error: unknown): void {
  // If logging itself fails there is nowhere left to report it; the host must not see a throw.
  host.log("error", message, { error: errorMessage(error) }).catch(() => undefined);
}

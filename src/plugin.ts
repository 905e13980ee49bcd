import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { parseOptions, type Options } from "./options/options.ts";
import { DAY_MS, systemClock } from "./core/clock.ts";
import { errorMessage } from "./core/errors.ts";
import { TaskManager } from "./core/task-manager.ts";
import { createOpencodeHost } from "./host/opencode-host.ts";
import { normalizeEvent } from "./host/normalize-event.ts";
import type { Host } from "./host/host.ts";
import { buildTools } from "./tools/build-tools.ts";
import { createForkSupport } from "./fork/fork-preparer.ts";
import { ForkContextTransform } from "./fork/fork-context-transform.ts";
import type { ForkMessage } from "./fork/fork-types.ts";
import { Store } from "./store/store.ts";
import { defaultDbPath } from "./store/default-db-path.ts";
import { countingHost } from "./host/counting-host.ts";
import { CRASH_FAULT_ENV, withCrashFault } from "./host/crash-fault-host.ts";
import { startRetention } from "./store/retention.ts";
import { filesAboutToBeWritten } from "./host/tool-call-info.ts";
import { EvidenceService } from "./evidence/evidence-service.ts";
import type { SqliteEvidenceStore } from "./store/sqlite-evidence-store.ts";
import { askForAutomationsByDefault } from "./plugin/automation-permission.ts";
import { LazyAutomations } from "./plugin/lazy-automations.ts";
import { InboxApplier } from "./inbox/inbox-applier.ts";
import { commandHandler } from "./inbox/apply-command.ts";
import { serveDashboardFromPlugin } from "./dashboard/serve-from-plugin.ts";
import { projectDirectory } from "./store/project-repository.ts";
import type { Workers } from "./workers/workers.ts";

/** The plugin: wires the host adapter, the store and the task core, and registers the tools. Never throws. */
export async function backgroundTasksPlugin(input: PluginInput, rawOptions?: unknown): Promise<Hooks> {
  try {
    return await startPlugin(input, rawOptions);
  } catch (error) {
    return { tool: buildTools({ unavailable: errorMessage(error) }) };
  }
}

async function startPlugin(input: PluginInput, rawOptions?: unknown): Promise<Hooks> {
  const { host, stopStats } = withStatsLogging(withCrashFault(createOpencodeHost(input.client), process.env[CRASH_FAULT_ENV]));
  const onCrash = (message: string, error: unknown) => logError(host, message, error);
  let options: Options;
  let store: Store;
  let manager: TaskManager<EvidenceService>;
  let retention: { stop(): void };
  let workers: Workers | undefined;
  try {
    options = parseOptions(rawOptions);
    store = Store.open({ path: options.dbPath || defaultDbPath(), projectId: input.project?.id ?? input.directory });
    rememberDirectory(store, input, onCrash);
    retention = startRetention({
      purge: (cutoffMs) => store.tasks.purgeOlderThan(cutoffMs),
      retentionMs: options.retentionDays * DAY_MS,
      clock: systemClock,
      onError: onCrash,
    });
    const evidenceStore = evidenceStoreOf(store, onCrash);
    // Loaded only when workers are configured: every OpenCode process pays for what the plugin imports.
    workers = options.workers.length > 0 ? new (await import("./workers/workers.ts")).Workers(options.workers, {
      local: host, clock: systemClock, health: store.workerHealth, graceMs: options.workerGraceSeconds * 1000,
      forkLimits: forkLimits(options), log: onCrash,
    }) : undefined;
    // With workers the core talks to every server through one routing host.
    const coreHost = workers?.host ?? host;
    manager = new TaskManager(coreHost, store.tasks, systemClock, options, {
      forks: createForkSupport(coreHost, forkLimits(options)),
      // A worker's task files are read through its API.
      hooks: (running) => new EvidenceService(running, evidenceStore, input.directory, options, workers && ((task) => workers!.filesOf(task))),
      placement: workers?.placement,
    });
    if (workers) attachWorkers(workers, manager);
  } catch (error) {
    onCrash("opencode-errands could not start", error);
    return { tool: buildTools({ unavailable: errorMessage(error) }) };
  }
  const forkTransform = new ForkContextTransform(forkLimits(options));
  manager.onSettle((task) => forkTransform.forget(task.id));
  // Loaded only when the project has use for it: before the core starts if it has an automation or a proposal, else at the first need.
  const automations = options.automations ? new LazyAutomations({
    build: async () => (await import("./plugin/build-automations.ts")).buildAutomations({
      store, manager, host, clock: systemClock, directory: input.directory, filesWrittenBy: (taskId) => manager.hooks.filesWritten(taskId),
    }, options, onCrash),
    wanted: () => options.discovery !== false || store.automations.any(),
    onCrash,
  }) : undefined;
  const inbox = new InboxApplier(store, commandHandler(manager, automations, host), systemClock, onCrash);
  const stopDashboard = options.dashboardPort > 0 ? serveDashboardFromPlugin(store.path, options.dashboardPort, host) : () => {};
  (automations?.prepare() ?? Promise.resolve())
    .then(() => manager.start()).then(() => workers?.start()).then(() => automations?.start())
    .catch((error) => onCrash("Starting background tasks failed", error)).finally(() => inbox.start());
  return {
    dispose: async () => {
      stopStats();
      inbox.stop();
      stopDashboard();
      automations?.stop();
      workers?.stop();
      retention.stop();
      manager.dispose();
      try {
        store.close();
      } catch (error) {
        onCrash("Closing the background tasks database failed", error);
      }
      host.log("info", "background tasks disposed").catch(() => undefined);
    },
    tool: buildTools({ manager, clock: systemClock, options, onCrash, evidence: manager.hooks, automations }),
    config: async (config) => {
      try {
        if (automations) askForAutomationsByDefault(config as { permission?: unknown });
      } catch (error) {
        onCrash("Could not set the automation permission default", error);
      }
    },
    event: async ({ event }) => {
      try {
        const normalized = normalizeEvent(event);
        if (normalized) manager.handleEvent(normalized);
        if (normalized) manager.hooks.handleEvent(normalized);
      } catch (error) {
        onCrash("Event handling failed", error);
      }
    },
    "tool.execute.before": async (call, output) => {
      try {
        const paths = filesAboutToBeWritten(call.tool, output.args);
        if (paths.length > 0) await manager.hooks.beforeWrite(call.sessionID, paths);
      } catch (error) {
        onCrash("Could not record a file before a write", error);
      }
    },
    "experimental.compaction.autocontinue": async (input, output) => {
      try {
        if (output.enabled) output.enabled = await manager.continueAfterCompaction(input.sessionID);
      } catch (error) {
        onCrash("Could not decide whether a compacted task goes on; OpenCode's default applies", error);
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

/** A worker's events reach the core and the evidence hooks as the local server's do. */
function attachWorkers(workers: Workers, manager: TaskManager<EvidenceService>): void {
  workers.attach(manager, (event) => {
    manager.handleEvent(event);
    manager.hooks.handleEvent(event);
  });
}

/** The evidence tables on the task store's connection, without evidence left by tasks already removed. */
function evidenceStoreOf(store: Store, onCrash: (message: string, error: unknown) => void): SqliteEvidenceStore {
  const evidenceStore = store.evidence;
  try {
    evidenceStore.purgeOrphans();
  } catch (error) {
    onCrash("Removing orphaned evidence failed; it is kept for now", error);
  }
  return evidenceStore;
}

/** Only for the dashboard's project names: a failure is logged and changes nothing else. */
function rememberDirectory(store: Store, input: PluginInput, onCrash: (message: string, error: unknown) => void): void {
  try {
    store.projects.record(store.projectId, projectDirectory(input), Date.now());
  } catch (error) {
    onCrash("Could not record the project's directory; the dashboard shows its id", error);
  }
}

const forkLimits = (options: Options) => ({ toolOutputLimit: options.forkToolOutputLimit, tokenCap: options.forkTokenCap });

/**
 * With OPENCODE_BACKGROUND_TASKS_STATS_MS set, every call the plugin makes to the host is counted
 * and the totals are logged at that interval (used by bench/load.ts). Off by default.
 */
function withStatsLogging(host: Host): { host: Host; stopStats: () => void } {
  const everyMs = Number(process.env.OPENCODE_BACKGROUND_TASKS_STATS_MS ?? 0);
  if (!(everyMs > 0)) return { host, stopStats: () => {} };
  const counted = countingHost(host);
  const timer = setInterval(() => {
    const total = Object.values(counted.counts).reduce((sum, n) => sum + n, 0);
    host.log("info", "background tasks host calls", { total, ...counted.counts }).catch(() => undefined);
  }, everyMs);
  timer.unref?.();
  return { host: counted.host, stopStats: () => clearInterval(timer) };
}

function logError(host: Host, message: string, error: unknown): void {
  // If logging itself fails there is nowhere left to report it; the host must not see a throw.
  host.log("error", message, { error: errorMessage(error) }).catch(() => undefined);
}

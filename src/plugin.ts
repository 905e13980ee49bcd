import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { dirname } from "node:path";
import { parseOptions, type Options } from "./options/options.ts";
import { DAY_MS, systemClock } from "./core/clock.ts";
import { errorMessage } from "./core/errors.ts";
import { TaskManager } from "./core/task-manager.ts";
import { createOpencodeHost, warmDirectory } from "./host/opencode-host.ts";
import { createToolCallDisplay } from "./host/tool-call-display.ts";
import { normalizeEvent } from "./host/normalize-event.ts";
import type { Host, HostEvent } from "./host/host.ts";
import { countingHost } from "./host/counting-host.ts";
import { CRASH_FAULT_ENV, withCrashFault } from "./host/crash-fault-host.ts";
import { filesAboutToBeWritten } from "./host/tool-call-info.ts";
import { Store } from "./store/store.ts";
import { TaskSpend } from "./cost/task-spend.ts";
import { defaultDbPath } from "./store/default-db-path.ts";
import { startRetention } from "./store/retention.ts";
import { projectDirectory } from "./store/project-repository.ts";
import { EvidenceService } from "./evidence/evidence-service.ts";
import { createForkSupport } from "./fork/fork-preparer.ts";
import { ForkContextTransform } from "./fork/fork-context-transform.ts";
import type { ForkMessage } from "./fork/fork-types.ts";
import { InboxApplier } from "./inbox/inbox-applier.ts";
import { commandHandler } from "./inbox/apply-command.ts";
import { serveDashboardFromPlugin } from "./dashboard/serve-from-plugin.ts";
import { AUTOMATION_TOOL_NAMES, buildTools, TOOL_NAMES } from "./tools/build-tools.ts";
import type { Workers } from "./workers/workers.ts";
import { askForAutomationsByDefault, askForBudgetsByDefault, askForMergesByDefault } from "./plugin/automation-permission.ts";
import { LazyAutomations } from "./plugin/lazy-automations.ts";
import { Parts, partFrom, type Part } from "./plugin/parts.ts";
import { RoutedHost } from "./host/routed-host.ts";
import { directoryRoute } from "./host/directory-route.ts";
import { registerActive } from "./plugin/instances.ts";
import { passiveHooks } from "./plugin/passive-instance.ts";
import { worktreeRoutes, worktreeSupport } from "./plugin/worktree-support.ts";
import { removeExpiredWorktrees } from "./plugin/worktree-retention.ts";
import { isInsideWorktreesRoot, worktreesRoot } from "./worktrees/worktree-paths.ts";

type OnCrash = (message: string, error: unknown) => void;

/** The plugin: the one place where its parts are built, in order, and started. Never throws. */
export async function errandsPlugin(input: PluginInput, rawOptions?: unknown): Promise<Hooks> {
  try {
    const options = parseOptions(rawOptions);
    // OpenCode starts the plugin again for each task's worktree directory: that instance stays passive.
    if (isInsideWorktreesRoot(dataDirOf(options), input.directory)) {
      return passiveHooks(projectIdOf(input), [...TOOL_NAMES, ...AUTOMATION_TOOL_NAMES], (message, error) => logError(createOpencodeHost(input.client), message, error));
    }
    return await startPlugin(input, rawOptions);
  } catch (error) {
    return { tool: buildTools({ unavailable: errorMessage(error) }) };
  }
}

async function startPlugin(input: PluginInput, rawOptions?: unknown): Promise<Hooks> {
  const { host, stopStats } = withStatsLogging(withCrashFault(createOpencodeHost(input.client), process.env[CRASH_FAULT_ENV]));
  const onCrash: OnCrash = (message, error) => logError(host, message, error);
  let plugin: Built;
  try {
    plugin = await build(input, rawOptions, host, onCrash);
  } catch (error) {
    onCrash("opencode-errands could not start", error);
    return { tool: buildTools({ unavailable: errorMessage(error) }) };
  }
  void plugin.parts.start();
  let unregister = () => {};
  const built = hooks(plugin, host, onCrash, () => {
    unregister();
    stopStats();
    plugin.parts.stop();
    try {
      plugin.store.close();
    } catch (error) {
      onCrash("Closing the background tasks database failed", error);
    }
    host.log("info", "background tasks disposed").catch(() => undefined);
  });
  // The worktrees' passive instances of this project forward their hooks and tools here.
  unregister = registerActive(plugin.store.projectId, built);
  return built;
}

type Built = Awaited<ReturnType<typeof build>>;

/**
 * Everything, built in dependency order with what each part needs given to its constructor:
 * options, store, workers, the task core with its evidence hooks, the automation layer (loaded
 * only when the project has use for it), the command inbox; then the list of parts to start.
 */
async function build(input: PluginInput, rawOptions: unknown, host: Host, onCrash: OnCrash) {
  const clock = systemClock;
  // Real-host tests shorten the task and run leases (never an option a user sets): the claims' lengths live in core/claims.ts LEASES.
  const leaseMs = Number(process.env.OPENCODE_ERRANDS_LEASE_MS) || undefined;
  const options = parseOptions(rawOptions);
  const store = Store.open({ path: options.dbPath || defaultDbPath(), projectId: projectIdOf(input) });
  rememberDirectory(store, input, onCrash);
  purgeOrphanedEvidence(store, onCrash);
  const forkLimits = { toolOutputLimit: options.forkToolOutputLimit, tokenCap: options.forkTokenCap };
  // An isolated task's session lives in its worktree's directory: calls about it go there.
  const local = new RoutedHost(host, directoryRoute((directory) => createOpencodeHost(input.client, directory), worktreeRoutes(store.tasks)));
  // A worker's events reach the core and the evidence hooks as the local server's do.
  const heard = (event: HostEvent) => {
    manager.handleEvent(event);
    manager.hooks.handleEvent(event);
  };
  // Imported only when workers are configured: every OpenCode process pays for what the plugin imports.
  // The core is built after them (it talks through their routing host), so they reach it through a function.
  const workers: Workers | undefined = options.workers.length > 0 ? new (await import("./workers/workers.ts")).Workers(options.workers, {
    local, clock, health: store.workerHealth, graceMs: options.workerGraceSeconds * 1000, forkLimits, log: onCrash,
    core: () => manager, onEvent: heard,
  }) : undefined;
  // A worker's sessions are answered by its server; the rest as `local` answers them.
  const coreHost: Host = workers ? new RoutedHost(local, workers.route) : local;
  // Set only by bench/cost-real-host.ts, to time a fan-out without the accounting: not an option.
  const spend = process.env.OPENCODE_ERRANDS_BENCH_NO_SPEND ? undefined : new TaskSpend(store.spend, store.tasks, onCrash, { dailyBudgetUsd: options.dailyBudgetUsd, now: () => clock.now() });
  const manager: TaskManager<EvidenceService> = new TaskManager(coreHost, store.tasks, clock, options, {
    forks: createForkSupport(coreHost, forkLimits),
    // A worker's task files are read through its API.
    hooks: (running) => new EvidenceService(running, store.evidence, input.directory, options, workers && ((task) => workers.filesOf(task))),
    placement: workers?.placement,
    // One name for this instance in every claim it takes (notifications here, and the store's other tables).
    claimer: store.holder,
    ...(leaseMs ? { taskLeaseMs: leaseMs } : {}),
    spend,
    worktrees: worktreeSupport(input.directory, () => worktreesRoot(dataDirOf(options), store.projectId), (directory) => warmDirectory(input.client, directory)),
  });
  const forkTransform = new ForkContextTransform(forkLimits);
  manager.onSettle((task) => forkTransform.forget(task.id));
  const automations = options.automations ? new LazyAutomations({
    build: async () => (await import("./plugin/build-automations.ts")).buildAutomations({
      // The routed host: a worker's session (a session: "continue" automation's) is asked of its worker.
      store, manager, host: coreHost, clock, directory: input.directory, filesWrittenBy: (taskId) => manager.hooks.filesWritten(taskId), onCrash,
      ...(leaseMs ? { runLeaseMs: leaseMs } : {}),
    }, options),
    wanted: () => options.discovery !== false || store.hasAutomations(),
    onCrash,
    clock,
  }) : undefined;
  const inbox = new InboxApplier(store, commandHandler(manager, automations, local), clock, onCrash);
  const parts: (Part | false | undefined)[] = [
    partFrom("retention", () => startRetention({
      purge: (cutoffMs) => {
        // Their rows are read first; the worktrees go after, each failure logged.
        void removeExpiredWorktrees(store.tasks, cutoffMs, (level, message) => void host.log(level, message).catch(() => undefined));
        return store.tasks.purgeOlderThan(cutoffMs);
      },
      fold: () => store.runHistory.fold({ keepRuns: options.historyRuns, now: clock.now(), retentionMs: options.retentionDays * DAY_MS }),
      retentionMs: options.retentionDays * DAY_MS, clock, onError: onCrash,
    }).stop),
    // It reads the database file on its own: it need not wait for the core.
    options.dashboardPort > 0 && partFrom("the dashboard", () => serveDashboardFromPlugin(store.path, options.dashboardPort, coreHost, options.dailyBudgetUsd)),
    // Built before the core starts, when the project has automations: the core's recovery may settle their runs.
    automations && { name: "loading the automation layer", start: () => automations.prepare() },
    { name: "the task core", start: () => manager.start(), stop: () => manager.dispose() },
    workers && { name: "the workers", start: () => workers.start(), stop: () => workers.stop() },
    automations && { name: "the automation layer", start: () => automations.start(), stop: () => automations.stop() },
    { name: "the command inbox", start: () => inbox.start(), stop: () => inbox.stop() },
  ];
  return {
    options, store, manager, forkTransform, automations, spend, display: createToolCallDisplay(input.client, onCrash),
    parts: new Parts(parts.filter((part): part is Part => !!part), onCrash),
  };
}

/** What OpenCode calls: the tools and the hooks, each of which logs a failure instead of throwing. */
function hooks(plugin: Built, host: Host, onCrash: OnCrash, dispose: () => void): Hooks {
  const { options, manager, forkTransform, automations, spend, display } = plugin;
  const evidence = manager.hooks;
  return {
    dispose: async () => dispose(),
    tool: buildTools({ manager, clock: systemClock, options, onCrash, evidence, automations, spend, display }),
    config: async (config) => {
      try {
        if (automations) askForAutomationsByDefault(config as { permission?: unknown });
        askForMergesByDefault(config as { permission?: unknown });
        askForBudgetsByDefault(config as { permission?: unknown });
      } catch (error) {
        onCrash("Could not set the permission defaults", error);
      }
    },
    event: async ({ event }) => {
      try {
        const normalized = normalizeEvent(event);
        if (normalized) manager.handleEvent(normalized);
        if (normalized) evidence.handleEvent(normalized);
      } catch (error) {
        onCrash("Event handling failed", error);
      }
    },
    "tool.execute.before": async (call, output) => {
      try {
        const paths = filesAboutToBeWritten(call.tool, output.args);
        if (paths.length > 0) await evidence.beforeWrite(call.sessionID, paths);
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
    "chat.params": async (input) => {
      try {
        await manager.beforeModelRequest(input.sessionID);
      } catch (error) {
        onCrash("Could not hold a model request of a task stopped at its budget", error);
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

/** One project id for both instances: OpenCode gives a worktree's instance its main checkout's project. */
function projectIdOf(input: PluginInput): string {
  return input.project?.id ?? input.directory;
}

/** The plugin's data folder: the database's directory (worktrees live under it, never in the project). */
function dataDirOf(options: Options): string {
  return dirname(options.dbPath || defaultDbPath());
}

/** Evidence left by tasks already removed; a failure keeps it for now. */
function purgeOrphanedEvidence(store: Store, onCrash: OnCrash): void {
  try {
    store.evidence.purgeOrphans();
  } catch (error) {
    onCrash("Removing orphaned evidence failed; it is kept for now", error);
  }
}

/** Only for the dashboard's project names: a failure is logged and changes nothing else. */
function rememberDirectory(store: Store, input: PluginInput, onCrash: OnCrash): void {
  try {
    store.projects.record(store.projectId, projectDirectory(input), Date.now());
  } catch (error) {
    onCrash("Could not record the project's directory; the dashboard shows its id", error);
  }
}

/**
 * With OPENCODE_ERRANDS_STATS_MS set, every call the plugin makes to the host is counted
 * and the totals are logged at that interval (used by bench/load.ts). Off by default.
 */
function withStatsLogging(host: Host): { host: Host; stopStats: () => void } {
  const everyMs = Number(process.env.OPENCODE_ERRANDS_STATS_MS ?? 0);
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

import { DAY_MS, type Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Host } from "../host/host.ts";
import type { Store } from "../store/store.ts";
import type { Options } from "../options/options.ts";
import { AutomationContext } from "../automations/automation-context.ts";
import { dailyBudgetState } from "../cost/daily-budget.ts";
import { AutomationCatalog } from "../automations/automation-catalog.ts";
import { RunLifecycle } from "../automations/run-lifecycle.ts";
import { ACTIVE_RUN } from "../automations/automation.ts";
import { LazyChannelSink } from "../channels/channel-sink.ts";
import { EventSources } from "../triggers/event-sources.ts";
import { defaultLoaders } from "../triggers/default-loaders.ts";
import { upstreamRuns } from "../triggers/upstream-runs.ts";
import type { SourceLoaders } from "../triggers/source-loaders.ts";
import { ProposalService } from "../proposals/proposal-service.ts";
import { discoveryNotice, discoveryProposer } from "../discovery/discovery-hooks.ts";
import type { AutomationLayer } from "./lazy-automations.ts";

export type AutomationDeps = {
  store: Store; manager: TaskManager; host: Host; clock: Clock;
  /** The project directory: watch paths and commands start there. */
  directory: string;
  /** Files a task's current run wrote (its evidence), relative to the project: a watch ignores its own automation's writes. */
  filesWrittenBy?: (taskId: string) => string[];
  /** Where event triggers' sources come from (tests and benchmarks give their own). */
  loaders?: SourceLoaders;
  onCrash: (message: string, error: unknown) => void;
  /** A run's lease (real-host tests shorten it); default LEASES.runMs. */
  runLeaseMs?: number;
};

type Startable = { start(): void; stop(): void };

/**
 * The automation layer, built in order (channels, context, run lifecycle with its event sources,
 * catalog, proposals, discovery), not started: the plugin imports this module only when the
 * project has use for automations (LazyAutomations). Start it once the core has started.
 */
export async function buildAutomations(deps: AutomationDeps, options: Options): Promise<AutomationLayer> {
  const { host, clock, directory } = deps;
  const store = await deps.store.automationTables();
  const channels = new LazyChannelSink(options.channels);
  await channels.load(store.channelOutbox, (message) => void host.log("warn", message).catch(() => undefined))
    .catch((error) => deps.onCrash("Channels could not start; runs are still told to their sessions", error));
  const ctx = new AutomationContext(store.automations, deps.manager, host, clock, {
    failurePause: options.automationFailurePause,
    resultCap: options.resultCapChars,
    retentionMs: options.retentionDays * DAY_MS,
    directory,
    workspaceContext: options.workspaceContext,
    workerNames: options.workers.map((w) => w.name),
    holder: deps.store.holder,
    ...(deps.runLeaseMs ? { runLeaseMs: deps.runLeaseMs } : {}),
  }, channels, {
    flush: () => deps.store.spend.flush(),
    machineToday: (now) => dailyBudgetState(deps.store.spend, options, now),
  });
  const discovery = options.discovery;
  const runs = new RunLifecycle(ctx, {
    eventSources: (intake) => new EventSources({
      store: store.triggers,
      holder: deps.store.holder,
      directory,
      clock,
      loaders: deps.loaders ?? defaultLoaders(options),
      fire: (triggerId, event) => intake.fireEvent(triggerId, event),
      recordSkip: (triggerId, summary, reason) => intake.recordSkip(triggerId, summary, reason),
      abandonRun: (runId) => intake.abandonRun(runId),
      ownWrites: (automationId) => {
        const taskIds = store.automations.runsWithStatus(automationId, ACTIVE_RUN).flatMap((r) => (r.taskId ? [r.taskId] : []));
        return new Set(taskIds.flatMap((id) => deps.filesWrittenBy?.(id) ?? []));
      },
      runsAfter: (automationId, afterRunId) => upstreamRuns(store.automations.runs(automationId, 100), afterRunId, (taskId) => deps.manager.get(taskId)?.result),
      log: (level, message, extra) => void host.log(level, message, extra).catch(() => undefined),
      webhook: { host: options.webhookHost, port: options.webhookPort },
    }),
    ...(discovery ? { extraNotice: discoveryNotice(store.automations) } : {}),
  });
  const catalog = new AutomationCatalog(ctx, runs);
  const proposals = new ProposalService(catalog, store.proposals, clock, {
    cooldownMs: options.proposalCooldownHours * 3600_000,
    maxPending: options.maxPendingProposals,
  }, discovery ? discoveryProposer(store.automations) : undefined);
  // Imported at the layer's start, and only with the option on: most users never turn discovery on.
  const discoveryPart = discovery ? startableFrom(async () => new (await import("../discovery/discovery.ts")).Discovery({
    automations: catalog, runs, proposals, host, clock, config: discovery,
    log: (message, error) => ctx.logError(message, error),
  }), (error) => ctx.logError("Discovery could not start", error)) : undefined;
  const parts: Startable[] = [runs, proposals, ...(discoveryPart ? [discoveryPart] : [])];
  return {
    service: { catalog, runs, proposals },
    start: () => parts.forEach((part) => part.start()),
    stop: () => {
      for (const part of [...parts].reverse()) part.stop();
      channels.stop();
    },
  };
}

/** A part started and stopped like the others, built from a module imported at its start. */
function startableFrom(load: () => Promise<Startable>, onError: (error: unknown) => void): Startable {
  let part: Startable | undefined;
  let stopped = false;
  return {
    start: () => {
      load().then((loaded) => {
        if (stopped) return;
        part = loaded;
        loaded.start();
      }).catch(onError);
    },
    stop: () => {
      stopped = true;
      part?.stop();
    },
  };
}

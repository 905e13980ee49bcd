import { DAY_MS, type Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Host } from "../host/host.ts";
import type { Store } from "../store/store.ts";
import { AutomationContext } from "./automation-context.ts";
import type { ChannelSink } from "../channels/channel-sink.ts";
import { AutomationCatalog } from "./automation-catalog.ts";
import type { Automations } from "./automation-layer.ts";
import { RunLifecycle } from "./run-lifecycle.ts";
import { ACTIVE_RUN } from "./automation.ts";
import { EventSources } from "../triggers/event-sources.ts";
import { defaultLoaders } from "../triggers/default-loaders.ts";
import type { SourceLoaders } from "../triggers/source-loaders.ts";
import { ProposalService } from "../proposals/proposal-service.ts";
import type { DiscoveryConfig } from "../discovery/discovery-config.ts";
import { discoveryNotice, discoveryProposer } from "../discovery/discovery-hooks.ts";

export type AutomationDeps = {
  store: Store; manager: TaskManager; host: Host; clock: Clock;
  /** The project directory: watch paths and commands start there. */
  directory: string;
  /** Files a task's current run wrote (its evidence), relative to the project: a watch ignores its own automation's writes. */
  filesWrittenBy?: (taskId: string) => string[];
  loaders?: SourceLoaders;
  /** The user's configured channels (none: runs are told to their session only). */
  channels?: ChannelSink;
};

/**
 * The automation layer on the task store's own connection. Create it before the core starts:
 * the core's restart recovery may settle runs, which the layer must hear. Then call `start`.
 */
export function createAutomations(
  deps: AutomationDeps,
  options: {
    automationFailurePause: number; resultCapChars: number; retentionDays: number; webhookPort: number; webhookHost: string; githubApiUrl: string;
    proposalCooldownHours: number; maxPendingProposals: number; discovery: DiscoveryConfig | false; workspaceContext: boolean;
    workers?: { name: string }[];
  },
): Automations & { start(): void; stop(): void } {
  const store = deps.store.automations;
  const ctx = new AutomationContext(store, deps.manager, deps.host, deps.clock, {
    failurePause: options.automationFailurePause,
    resultCap: options.resultCapChars,
    retentionMs: options.retentionDays * DAY_MS,
    directory: deps.directory,
    workspaceContext: options.workspaceContext,
    workerNames: (options.workers ?? []).map((w) => w.name),
  }, deps.channels);
  const discovery = options.discovery;
  const runs = new RunLifecycle(ctx, {
    eventSources: (intake) => new EventSources({
      store: deps.store.triggers,
      directory: deps.directory,
      clock: deps.clock,
      loaders: deps.loaders ?? defaultLoaders(options),
      fire: (triggerId, event) => intake.fireEvent(triggerId, event),
      recordSkip: (triggerId, summary, reason) => intake.recordSkip(triggerId, summary, reason),
      abandonRun: (runId) => intake.abandonRun(runId),
      ownWrites: (automationId) => {
        const taskIds = store.runsWithStatus(automationId, ACTIVE_RUN).flatMap((r) => (r.taskId ? [r.taskId] : []));
        return new Set(taskIds.flatMap((id) => deps.filesWrittenBy?.(id) ?? []));
      },
      log: (level, message, extra) => {
        deps.host.log(level, message, extra).catch(() => undefined);
      },
      webhook: { host: options.webhookHost, port: options.webhookPort },
    }),
    ...(discovery ? { extraNotice: discoveryNotice(store) } : {}),
  });
  const catalog = new AutomationCatalog(ctx, runs);
  const proposals = new ProposalService(catalog, deps.store.proposals, deps.clock, {
    cooldownMs: options.proposalCooldownHours * 3600_000,
    maxPending: options.maxPendingProposals,
  }, discovery ? discoveryProposer(store) : undefined);
  // Loaded at start, and only with the option on: most users never turn discovery on.
  const discoveryPart = discovery ? lazyStartable(async () => new (await import("../discovery/discovery.ts")).Discovery({
    automations: catalog, runs, proposals, host: deps.host, clock: deps.clock, config: discovery,
    log: (message, error) => ctx.logError(message, error),
  }), (error) => ctx.logError("Discovery could not start", error)) : undefined;
  return {
    catalog, runs, proposals,
    start: () => {
      runs.start();
      proposals.start();
      discoveryPart?.start();
    },
    stop: () => {
      runs.stop();
      proposals.stop();
      discoveryPart?.stop();
    },
  };
}

type Startable = { start(): void; stop(): void };

/** Something started and stopped like a part of the layer, but built from a module loaded at its start. */
function lazyStartable(load: () => Promise<Startable>, onError: (error: unknown) => void): Startable {
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

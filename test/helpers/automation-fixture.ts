import { after } from "node:test";
import type { WorktreeSupport } from "../../src/core/task-worktree.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { coreFixture, PARENT, MODEL } from "./core-fixture.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { AutomationContext, type SpendPort } from "../../src/automations/automation-context.ts";
import type { ChannelSink } from "../../src/channels/channel-sink.ts";
import { AutomationCatalog, type AutomationFields } from "../../src/automations/automation-catalog.ts";
import { RunLifecycle } from "../../src/automations/run-lifecycle.ts";
import type { Automations } from "../../src/automations/automation-layer.ts";
import type { Options } from "../../src/options/options.ts";
import type { TriggerInput } from "../../src/automations/trigger-spec.ts";
import { EventSources } from "../../src/triggers/event-sources.ts";
import { TriggerRepository } from "../../src/store/trigger-repository.ts";
import { newClaimer } from "../../src/core/claims.ts";
import type { SourceLoaders } from "../../src/triggers/source-loaders.ts";
import { ProposalService } from "../../src/proposals/proposal-service.ts";
import { ProposalRepository } from "../../src/store/proposal-repository.ts";
import { discoveryNotice, discoveryProposer } from "../../src/discovery/discovery-hooks.ts";

export { PARENT, MODEL };

/** A temp folder for a database file, removed by `cleanup`. */
export function tempDb() {
  const dir = mkdtempSync(join(tmpdir(), "auto-"));
  return { path: join(dir, "tasks.db"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The task core on a fake host and fake clock, over SQLite, with the automation layer on the same
 * connection. Pass `dbPath` to put a second fixture on the same database file.
 */
export function automationFixture(dbPath: string, overrides: Partial<Options> = {}, events?: { loaders?: SourceLoaders; directory?: string; channels?: ChannelSink; spend?: SpendPort; worktrees?: WorktreeSupport }) {
  const store = SqliteTaskStore.open({ path: dbPath, projectId: "proj" });
  const core = coreFixture({ automationFailurePause: 2, ...overrides }, store, events?.worktrees ? { worktrees: events.worktrees } : {});
  const autoStore = new AutomationRepository(store.db, "proj");
  const ctx = new AutomationContext(autoStore, core.manager, core.host, core.clock, {
    failurePause: overrides.automationFailurePause ?? 2, resultCap: 10_000,
    retentionMs: overrides.retentionDays === undefined ? undefined : overrides.retentionDays * 86_400_000,
    directory: events?.directory ?? tmpdir(),
    // No git process in these tests unless one asks: their prompts are asserted verbatim.
    workspaceContext: overrides.workspaceContext ?? false,
  }, events?.channels, events?.spend);
  const loaders = events?.loaders;
  // Discovery's hooks act on the discovery automation's runs only: always wired here, as the plugin does with the option on.
  const runs = new RunLifecycle(ctx, { extraNotice: discoveryNotice(autoStore), ...loaders ? {
    eventSources: (intake) => new EventSources({
      store: new TriggerRepository(store.db, "proj"), holder: newClaimer(), directory: events?.directory ?? "/tmp", clock: core.clock, loaders,
      fire: (t, e) => intake.fireEvent(t, e), recordSkip: (t, s, r) => intake.recordSkip(t, s, r), abandonRun: (id) => intake.abandonRun(id),
      ownWrites: () => new Set(), log: () => {}, webhook: { host: "127.0.0.1", port: 0 },
    }),
  } : {} });
  const catalog = new AutomationCatalog(ctx, runs);
  const proposals = new ProposalService(catalog, new ProposalRepository(store.db, "proj"), core.clock, {
    cooldownMs: (overrides.proposalCooldownHours ?? 24) * 3600_000, maxPending: overrides.maxPendingProposals ?? 3,
  }, discoveryProposer(autoStore));
  const automations: Automations = { catalog, runs, proposals };

  function create(fields: Partial<AutomationFields> = {}, triggers: TriggerInput[] = []) {
    const id = catalog.newAutomationId();
    const parsed = catalog.parseTriggers(triggers, id);
    const hooks = new Map(parsed.flatMap((t, i) => (t.spec.kind === "webhook" ? [[t.id, { name: t.spec.name, secret: String(triggers[i]!.secret ?? "s3cret-s3cret-s3cret") }] as const] : [])));
    return catalog.create(id, {
      title: "check ci", prompt: "look at CI", agent: "general", notify: "always", sessionMode: "fresh",
      overlap: "skip", catchUp: "skip", enabled: true, ...fields,
    }, parsed, { sessionID: PARENT, agent: "build", model: MODEL }, hooks).automation;
  }

  /** Every child session of the parent (one per fresh run). */
  const children = () => [...core.host.sessions.values()].filter((s) => s.parentID === PARENT).map((s) => s.id);

  return { ...core, autoStore, ctx, automations, catalog, runs, proposals, create, children, close: () => { runs.stop(); core.manager.dispose(); store.close(); } };
}

/** A fixture on its own temp database, removed after the test; the parent idle and the layer started. */
export function startedAutomations(overrides: Partial<Options> = {}) {
  const db = tempDb();
  const f = automationFixture(db.path, overrides);
  after(() => { f.close(); db.cleanup(); });
  f.host.setActivity(PARENT, "idle");
  f.runs.start();
  return f;
}

import type { Clock } from "../core/clock.ts";
import { DAY_MS } from "../core/clock.ts";
import type { Host } from "../host/host.ts";
import { ACTIVE_RUN, type Automation, type Run } from "../automations/automation.ts";
import type { AutomationCatalog, Creator } from "../automations/automation-catalog.ts";
import type { RunLifecycle } from "../automations/run-lifecycle.ts";
import type { ProposalService } from "../proposals/proposal-service.ts";
import { DISCOVERY_ID } from "./discovery-hooks.ts";
import type { DiscoveryConfig } from "./discovery-config.ts";
import { discoveryPrompt } from "./discovery-prompt.ts";
import { lastUserMessage, type UserPresence } from "./user-presence.ts";

export { DISCOVERY_ID };
/** The user counts as around after a message in the last 2 hours. */
export const AROUND_MS = 2 * 3600_000;
const FAILED_RUNS_SINCE_MS = 7 * DAY_MS;

export type DiscoveryDeps = {
  automations: AutomationCatalog; runs: RunLifecycle; proposals?: ProposalService; host: Host; clock: Clock; config: DiscoveryConfig;
  log: (message: string, error: unknown) => void;
};

/**
 * Discovery: while the user is around but idle (a message in the project in the last 2 hours,
 * none in the last `idle`), at most once per `every` and never two at once, a run of the built-in
 * automation looks for useful background work and proposes it through task_propose.
 */
export class Discovery {
  private timer: unknown;
  private stopped = false;
  private checking = false;

  /** Its run's notice and its child's proposals are wired apart (discovery-hooks.ts): they work before this module loads. */
  constructor(private deps: DiscoveryDeps) {}

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.deps.clock.clearTimeout(this.timer);
  }

  /** Starts a discovery run when it is due; says why not otherwise (for the log and the tests). */
  async check(): Promise<string> {
    const { clock, config, host } = this.deps;
    const waitReason = this.notDue(this.deps.automations.get(DISCOVERY_ID));
    if (waitReason) return waitReason;
    const now = clock.now();
    const presence = await lastUserMessage(host, now, AROUND_MS);
    if (!presence) return "nobody wrote in the project in the last 2 h";
    if (now - presence.lastMessageAt < config.idleMs) return "the user is active";
    // A long answer being written to the user is not the user being away.
    if ((await host.statuses())[presence.sessionID]) return "the user's session is working";
    const run = this.admit(presence);
    if (!run) return "another process started it";
    if (run.status === "starting") await this.deps.runs.starter.launch(run);
    return "started";
  }

  private schedule(): void {
    if (this.stopped) return;
    const { everyMs, idleMs } = this.deps.config;
    const delay = Math.min(60_000, Math.max(1000, Math.min(everyMs, idleMs) / 3));
    this.timer = this.deps.clock.setTimeout(() => void this.tick(), delay);
  }

  private async tick(): Promise<void> {
    if (this.checking) return this.schedule();
    this.checking = true;
    try {
      await this.check();
    } catch (error) {
      this.deps.log("A discovery check failed; it is tried again later", error);
    } finally {
      this.checking = false;
      this.schedule();
    }
  }

  /** Why no run may start now, whatever the user does: paused, running, or too soon after the last. */
  private notDue(a: Automation | undefined): string | undefined {
    if (!a) return undefined;
    if (!a.enabled) return "the discovery automation is paused";
    const runs = this.deps.runs.runs(a.id, 20);
    if (runs.some((r) => ACTIVE_RUN.includes(r.status))) return "a discovery run is running";
    const last = runs.find((r) => r.startedAt !== undefined);
    if (last && this.deps.clock.now() - last.startedAt! < this.deps.config.everyMs) return "the last run was less than `every` ago";
    return undefined;
  }

  /** In one transaction, so that of several processes one starts it: the automation (made at first), its prompt, the run. */
  private admit(presence: UserPresence): Run | undefined {
    const { automations, clock, config } = this.deps;
    return automations.transaction(() => {
      const current = automations.get(DISCOVERY_ID);
      if (this.notDue(current)) return undefined;
      const idleFor = Math.round((clock.now() - presence.lastMessageAt) / 60_000);
      const fields = { prompt: discoveryPrompt(this.view()), agent: config.agent, model: config.model };
      const reportTo: Creator = { sessionID: presence.sessionID, agent: presence.agent, model: presence.model };
      const a = current
        ? automations.update(DISCOVERY_ID, { ...fields, reportTo })
        : automations.create(DISCOVERY_ID, {
          title: "Discovery (built-in)", ...fields, notify: "never", sessionMode: "fresh", overlap: "skip", catchUp: "skip", enabled: true,
        }, [], reportTo).automation;
      return this.deps.runs.starter.admit(a, { firedBy: "idle", event: { summary: `the user has written nothing for ${idleFor} min` } });
    });
  }

  private view() {
    const { automations, runs, clock } = this.deps;
    const now = clock.now();
    const all = automations.list().filter((x) => x.automation.id !== DISCOVERY_ID);
    const failedRuns = all.flatMap(({ automation }) =>
      runs.runs(automation.id, 20)
        .filter((run) => (run.status === "error" || run.status === "cancelled") && (run.endedAt ?? run.createdAt) >= now - FAILED_RUNS_SINCE_MS)
        .slice(0, 3).map((run) => ({ title: automation.title, run })));
    return { automations: all, rejections: this.deps.proposals?.recentRejections() ?? [], failedRuns: failedRuns.slice(0, 10), now };
  }
}

import { AutomationRefusal } from "../core/errors.ts";
import type { Automation } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";

/**
 * Channels are the user's: a definition may only name ones the plugin's `channels` option
 * configures, so a model (or a prompt injection it read) cannot send results elsewhere.
 */
export function checkChannels(ctx: AutomationContext, fields: Pick<Partial<Automation>, "channels" | "report">, current?: Automation): void {
  const configured = ctx.channels?.names() ?? [];
  const listed = configured.length > 0 ? `Configured: ${configured.join(", ")}.` : "None are configured: the user adds them under the plugin's \"channels\" option.";
  for (const name of fields.channels ?? []) {
    if (/[:/]/.test(name)) throw new AutomationRefusal(`channels take the names of channels the user configured, never a URL. ${listed}`);
    if (!configured.includes(name)) throw new AutomationRefusal(`Unknown channel "${name}". ${listed}`);
  }
  const channels = fields.channels ?? current?.channels ?? [];
  if ((fields.report ?? current?.report) === "channels" && channels.length === 0) {
    throw new AutomationRefusal(`report: "channels" needs at least one channel in channels. ${listed}`);
  }
}

/** isolation "worktree" gives every run a fresh worktree on the local machine: not a continued session, not a worker. */
export function checkIsolation(a: Pick<Automation, "isolation" | "sessionMode" | "worker">): void {
  if (a.isolation !== "worktree") return;
  if (a.sessionMode === "continue") throw new AutomationRefusal('isolation "worktree" gives each run a fresh worktree, so runs cannot continue one session: use session "fresh", or leave out isolation.');
  if (a.worker && a.worker !== "local") throw new AutomationRefusal('isolation "worktree" runs on this machine: leave out worker, or leave out isolation.');
}

/** An automation's worker must be "local", "auto" or one the workers option names. */
export function checkWorker(ctx: AutomationContext, worker: string | undefined): void {
  if (worker === undefined || worker === "local" || worker === "auto") return;
  const names = ctx.config.workerNames ?? [];
  if (names.includes(worker)) return;
  const known = names.length ? `"local", "auto" or ${names.join(", ")}` : `"local" or "auto" (no workers are configured: plugin option "workers")`;
  throw new AutomationRefusal(`No worker "${worker}"; worker takes ${known}.`);
}

/** Refuses an agent the host does not know, naming the ones it has. */
export async function checkAgent(ctx: AutomationContext, name: string): Promise<void> {
  const agents = await ctx.host.agents();
  if (!agents.some((a) => a.name === name)) throw new AutomationRefusal(`Unknown agent "${name}". Available agents: ${agents.map((a) => a.name).join(", ")}.`);
}

import { DAY_MS, type Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Host } from "../host/host.ts";
import type { SqliteTaskStore } from "../store/sqlite-task-store.ts";
import { AutomationContext } from "./automation-context.ts";
import { AutomationService } from "./automation-service.ts";
import { AutomationStore } from "./automation-store.ts";

/**
 * The automation layer on the task store's own connection. Create it before the core starts:
 * the core's restart recovery may settle runs, which the layer must hear. Then call `start`.
 */
export function createAutomations(
  deps: { store: SqliteTaskStore; manager: TaskManager; host: Host; clock: Clock },
  options: { automationFailurePause: number; resultCapChars: number; retentionDays: number },
): AutomationService {
  const store = new AutomationStore(deps.store.db, deps.store.projectId);
  const ctx = new AutomationContext(store, deps.manager, deps.host, deps.clock, {
    failurePause: options.automationFailurePause,
    resultCap: options.resultCapChars,
    retentionMs: options.retentionDays * DAY_MS,
  });
  return new AutomationService(ctx);
}

/**
 * OpenCode allows a permission its config does not name, so `ctx.ask` would never prompt:
 * unless the user decided (`"background_automation": "allow" | "deny" | "ask"`), ask.
 */
export function askForAutomationsByDefault(config: { permission?: unknown }): void {
  if (typeof config.permission === "string") return; // one answer for every permission, set by the user
  const permission = (config.permission ?? {}) as Record<string, unknown>;
  if (permission.background_automation !== undefined) return;
  config.permission = { ...permission, background_automation: "ask" };
}

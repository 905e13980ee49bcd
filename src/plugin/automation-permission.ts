/**
 * OpenCode allows a permission its config does not name, so `ctx.ask` would never prompt:
 * unless the user decided (`"background_automation": "allow" | "deny" | "ask"`), ask.
 */
export function askForAutomationsByDefault(config: { permission?: unknown }): void {
  askByDefault(config, "background_automation");
}

/** The same for `background_merge`: merging or discarding a task's branch changes the user's repository. */
export function askForMergesByDefault(config: { permission?: unknown }): void {
  askByDefault(config, "background_merge");
}

/** The same for `background_budget`: a budget above the taskBudget option, or more for a task stopped at its budget, is the user's call. */
export function askForBudgetsByDefault(config: { permission?: unknown }): void {
  askByDefault(config, "background_budget");
}

function askByDefault(config: { permission?: unknown }, name: string): void {
  if (typeof config.permission === "string") return; // one answer for every permission, set by the user
  const permission = (config.permission ?? {}) as Record<string, unknown>;
  if (permission[name] !== undefined) return;
  config.permission = { ...permission, [name]: "ask" };
}

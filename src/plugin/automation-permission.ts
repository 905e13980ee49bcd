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

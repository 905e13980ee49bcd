import type { Automations } from "./automation-layer.ts";

/**
 * How the tools, the inbox and the plugin reach the automation layer, which is loaded only when
 * the project has use for it (plugin/lazy-automations.ts): most projects have no automation.
 */
export type AutomationAccess = {
  /** The service if this process has loaded the layer; never loads. */
  loaded(): Automations | undefined;
  /** The service, loading and starting the layer first if needed; rejects when it cannot start. */
  load(): Promise<Automations>;
  /** The service if the project has an automation or a proposal (loading the layer then), else undefined. */
  ifWanted(): Promise<Automations | undefined>;
};

/** Access to a layer that is built already (tests, benchmarks). */
export function builtAutomations(service: Automations): AutomationAccess {
  return { loaded: () => service, load: async () => service, ifWanted: async () => service };
}

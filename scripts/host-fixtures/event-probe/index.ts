/**
 * A plugin for scripts/capture-host-fixtures.ts only: appends every event its `event` hook
 * receives, exactly as a plugin gets it, as one JSON line to the file named by the `out` option.
 * It changes nothing.
 */
import { appendFileSync } from "node:fs";
import type { PluginModule } from "@opencode-ai/plugin";

const plugin: PluginModule = {
  id: "event-probe",
  server: async (_input, options) => {
    const out = String(options?.out ?? "");
    return {
      event: async ({ event }) => {
        if (out) appendFileSync(out, JSON.stringify(event) + "\n");
      },
    };
  },
};

export default plugin;

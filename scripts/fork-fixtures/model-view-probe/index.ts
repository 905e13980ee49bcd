/**
 * A plugin for scripts/capture-fork-fixtures.ts only: appends, as one JSON line per model request,
 * the messages OpenCode hands to `experimental.chat.messages.transform` (after its own compaction
 * filtering and reordering), to the file named by the `out` option. It changes nothing.
 */
import { appendFileSync } from "node:fs";
import type { PluginModule } from "@opencode-ai/plugin";

const plugin: PluginModule = {
  id: "model-view-probe",
  server: async (_input, options) => {
    const out = String(options?.out ?? "");
    return {
      "experimental.chat.messages.transform": async (_hookInput, output) => {
        if (!out) return;
        const sessionID = String(output.messages[0]?.info.sessionID ?? "");
        appendFileSync(out, JSON.stringify({ sessionID, messages: output.messages }) + "\n");
      },
    };
  },
};

export default plugin;

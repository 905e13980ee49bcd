import type { PluginModule } from "@opencode-ai/plugin";
import { backgroundTasksPlugin } from "./plugin.ts";

// OpenCode requires every export of a plugin entry to be a plugin: export nothing else here.
const plugin: PluginModule = { id: "opencode-errands", server: backgroundTasksPlugin };
export default plugin;

import type { PluginModule } from "@opencode-ai/plugin";
import { errandsPlugin } from "./plugin.ts";

// OpenCode requires every export of a plugin entry to be a plugin: export nothing else here.
const plugin: PluginModule = { id: "opencode-errands", server: errandsPlugin };
export default plugin;

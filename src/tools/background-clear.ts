import type { TaskManager } from "../core/task-manager.ts";
import { defineTool } from "./tool-kit.ts";

type Deps = { manager: TaskManager; onCrash: (message: string, error: unknown) => void };

export function backgroundClearTool({ manager, onCrash }: Deps) {
  return defineTool({
    name: "background_clear",
    description: "Hide this session's finished tasks from background_list.",
    args: () => ({}),
    onCrash,
    async run(_args, call) {
      const { cleared, running } = manager.clear(call.sessionID);
      const head = `Cleared ${cleared} finished task${cleared === 1 ? "" : "s"}.`;
      if (running.length === 0) return head;
      const ids = running.map((t) => t.id).join(", ");
      return `${head} ${running.length} still running (${ids}), left in the list; cancel them with background_cancel if they are no longer needed.`;
    },
  });
}

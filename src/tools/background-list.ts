import type { TaskManager } from "../core/task-manager.ts";
import type { Clock } from "../core/clock.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import { defineTool } from "./tool-kit.ts";
import { listLine } from "./task-view.ts";
import type { SpendLines } from "../cost/task-spend.ts";

type Deps = { manager: TaskManager; clock: Clock; onCrash: (message: string, error: unknown) => void; spend?: SpendLines };

export function backgroundListTool({ manager, clock, onCrash, spend }: Deps) {
  return defineTool({
    name: "background_list",
    description: "This session's tasks.",
    args: (s) => ({
      status: s.enum(["queued", "running", "completed", "error", "cancelled", "resumed"]).optional(),
    }),
    onCrash,
    async run(args, call) {
      const failure = manager.storeFailure();
      const warning = failure ? `The task store is failing: ${failure.message}; results may be stale.\n` : "";
      const scope = await manager.scopeOf(call.sessionID);
      const tasks = manager.launchersFor(call.sessionID, scope).flatMap((launcher) => manager.listForParent(launcher, args.status));
      if (tasks.length === 0) return warning + (args.status ? `No background tasks found with status ${args.status}.` : "No background tasks found.");
      const now = clock.now();
      // Tasks the children launched themselves stand under their task: `  └ ses_… grandchild running`.
      // COST: the task's spend with everything it launched; nothing before its first model request.
      const line = (task: TaskSummary) => listLine(task, now) + costCell(spend?.line(task.id));
      const lines = tasks.flatMap((task) => [
        line(task),
        ...manager.tasksBelow(task.id).map(({ task: below, depth }) => `${"  ".repeat(depth)}└ ${line(below)}`),
      ]);
      return warning + lines.join("\n");
    },
  });
}

const costCell = (spent: string | undefined) => (spent ? `  cost ${spent}` : "");

import type { TaskManager } from "../core/task-manager.ts";
import type { Clock } from "../core/clock.ts";
import { isSettled } from "../core/task.ts";
import { TaskError } from "../core/errors.ts";
import { defineTool } from "./tool-kit.ts";
import { outputBlock } from "./task-view.ts";
import type { EvidenceService } from "../evidence/evidence-service.ts";
import type { SpendLines } from "../cost/task-spend.ts";

type Deps = {
  manager: TaskManager;
  clock: Clock;
  defaultTimeoutSeconds: number;
  maxTimeoutSeconds: number;
  onCrash: (message: string, error: unknown) => void;
  evidence?: EvidenceService;
  spend?: SpendLines;
};

export function backgroundOutputTool({ manager, clock, defaultTimeoutSeconds, maxTimeoutSeconds, onCrash, evidence, spend }: Deps) {
  return defineTool({
    name: "background_output",
    description: `Status and result of a task or batch; block: true waits (timeout s, default ${defaultTimeoutSeconds}, max ${maxTimeoutSeconds}).`,
    args: (s) => ({
      task_id: s.string().describe("task/batch id or prefix"),
      block: s.boolean().optional(),
      timeout: s.number().positive().max(maxTimeoutSeconds).optional(),
      evidence: s.boolean().optional().describe("full lists"),
    }),
    // The description states the timeout's bounds; they are checked when parsing.
    shown: (s) => ({
      task_id: s.string().describe("task/batch id or prefix"),
      block: s.boolean().optional(),
      timeout: s.number().optional(),
      evidence: s.boolean().optional().describe("full lists"),
    }),
    onCrash,
    async run(args, call) {
      // Without a host round-trip when the caller is known: a blocking wait counts from the call.
      const found = manager.lookup(args.task_id, manager.knownScope(call.sessionID) ?? await manager.scopeOf(call.sessionID));
      if (found.kind !== "tasks") throw new TaskError(found.message);
      let note = "";
      if (args.block) {
        const seconds = args.timeout ?? defaultTimeoutSeconds;
        const outcome = await manager.waitFor(found.tasks, seconds * 1000, call.abort);
        if (outcome.timedOut) note = `Timed out after waiting ${seconds}s; the task is still running. Call again to keep waiting.\n\n`;
        if (outcome.aborted) note = "Stopped waiting: this turn was aborted.\n\n";
      }
      const blocks = found.tasks.map((stale) => {
        const stored = manager.get(stale.id);
        if (!stored) return `Task ${stale.id} no longer exists.`;
        const fresh = manager.withLiveProgress(stored);
        if (isSettled(fresh.status)) manager.markRetrieved(fresh);
        const extra = { evidence: evidence?.describe(fresh, Boolean(args.evidence)), spent: spend?.line(fresh.id) };
        return outputBlock(fresh, clock.now(), extra);
      });
      const heading = found.batchId ? `Batch ${found.batchId} (${found.tasks.length} tasks)\n\n` : "";
      return note + heading + blocks.join("\n\n---\n\n");
    },
  });
}

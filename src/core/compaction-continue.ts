import type { Host } from "../host/host.ts";
import { RUNNING_STATUSES, type Task } from "./task.ts";

/** The answer, the compaction request and the summary, with room to spare. */
const RECENT = 5;

/**
 * OpenCode compacts a session that nears its model's context limit right after the step that
 * filled it, then (unless a plugin says no) adds a synthetic "Continue if you have next steps"
 * prompt and runs the model once more. For a running task whose latest answer was final, that
 * extra turn would replace the run's answer with a reply to a prompt nobody wrote: no continue
 * then. A task compacted mid-work (its last step called tools) keeps it, or it would stop half
 * done. Anything that is not one of our running tasks keeps the host's default.
 */
export async function continueAfterCompaction(task: Task | undefined, host: Host): Promise<boolean> {
  if (!task || !RUNNING_STATUSES.includes(task.status)) return true;
  const answer = (await host.recentMessages(task.id, RECENT)).findLast((m) => m.role === "assistant" && !m.summary);
  const final = answer !== undefined && answer.createdAt >= task.promptedAt && answer.completedAt !== undefined && !answer.toolCallsPending && !answer.error;
  return !final;
}

import type { Clock } from "./clock.ts";
import type { Host, HostMessage } from "../host/host.ts";
import type { TaskStore } from "./task-store.ts";
import type { Task, TaskStatus } from "./task.ts";
import { judgeCompletion } from "./completion-check.ts";

export const CONTINUE_PROMPT =
  "OpenCode was restarted while you were working on this task. Continue where you left off and finish the task.";

export type RecoveryTarget = {
  host: Host;
  store: TaskStore;
  clock: Clock;
  onInterrupted: "resume" | "fail";
  settle(taskId: string, to: TaskStatus, fields: { result?: string; error?: string }): boolean;
  /** Prompts an interrupted child to continue (once, even with two plugin instances) and notes it for the parent. */
  continueInterrupted(task: Task): Promise<void>;
};

/**
 * Brings every task still marked running or resumed in line with the host after a (re)start:
 * a finished child is settled, a gone child fails, a busy one is left to finish, and one that
 * stopped mid-run is resumed or failed according to `onInterrupted`.
 */
export async function recoverTasks(target: RecoveryTarget, active: Task[]): Promise<void> {
  if (active.length === 0) return;
  const statuses = await target.host.statuses();
  for (const task of active) {
    if (statuses[task.id]) continue;
    if (!(await target.host.sessionExists(task.id))) {
      target.settle(task.id, "error", { error: "The child session no longer exists; it was lost while OpenCode was not running." });
      continue;
    }
    const recent = await target.host.recentMessages(task.id, 6);
    const verdict = judgeCompletion(task, recent);
    if (verdict.kind === "completed") target.settle(task.id, "completed", { result: verdict.result });
    else if (verdict.kind === "error") target.settle(task.id, "error", { error: verdict.error });
    else await handleInterrupted(target, task, recent);
  }
}

async function handleInterrupted(target: RecoveryTarget, task: Task, recent: HostMessage[]): Promise<void> {
  if (isFreshPrompt(task, recent, target.clock.now())) return; // just launched: the run is about to start
  if (target.onInterrupted === "fail") {
    target.settle(task.id, "error", { error: "Interrupted: OpenCode stopped while the task was running (onInterrupted is \"fail\")." });
  } else {
    await target.continueInterrupted(task);
  }
}

/** A prompt sent in the last few seconds whose run has not started yet is not an interruption. */
function isFreshPrompt(task: Task, recent: HostMessage[], now: number): boolean {
  const last = recent.at(-1);
  return last?.role === "user" && now - task.promptedAt < 5000;
}

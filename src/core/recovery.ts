import type { HostMessage } from "../host/host.ts";
import type { Task } from "./task.ts";
import { isSettled } from "./task.ts";
import { judgeCompletion } from "./completion-check.ts";
import { RECENT_MESSAGES, type TaskLifecycle } from "./task-lifecycle.ts";
import type { CoreContext } from "./core-context.ts";
import type { ParentNotifier } from "./parent-notifier.ts";
import { interruptedLine } from "./notice-line.ts";

/** `start` gives a child its first prompt (the scheduler's start), for a launch cut off before it. */
type Parts = { ctx: CoreContext; life: TaskLifecycle; notifier: ParentNotifier; start: (task: Task) => Promise<void> };

export const CONTINUE_PROMPT =
  "OpenCode was restarted while you were working on this task. Continue where you left off and finish the task.";

/**
 * Brings the running tasks this instance may take over in line with the host, after a (re)start
 * or when their owner is gone (the claim sweep): a task whose row another live process holds is
 * left alone and nothing is said to its child. Each one taken is claimed first (one process wins
 * it), then: a finished child is settled, a gone child fails, a child busy here is followed, and
 * one that stopped mid-run is told to continue or failed, by `onInterrupted`. Queued tasks simply
 * stay queued for the scheduler.
 */
export async function recoverTasks(parts: Parts, onInterrupted: "resume" | "fail", which: (task: Task) => boolean = () => true): Promise<void> {
  const { ctx, life } = parts;
  const taken = life.activeTasks().filter(which).filter((task) => life.ownership.take(task.id));
  if (taken.length === 0) return;
  const statuses = await ctx.host.statuses();
  for (const task of taken) {
    life.progress.track(task.id, task.progress);
    if (statuses[task.id]) continue; // busy in this very process: its events come here
    // One task's failure (the host or the store) must not leave the others unrecovered.
    await recoverTask(parts, task, onInterrupted).catch((error) => ctx.log.error(`Could not recover task ${task.id}; polling will retry`, error));
  }
}

async function recoverTask(parts: Parts, task: Task, onInterrupted: "resume" | "fail"): Promise<void> {
  const { ctx, life } = parts;
  if (!(await ctx.host.sessionExists(task.id))) {
    life.settle(task.id, "error", { error: "The child session no longer exists; it was lost while OpenCode was not running." });
    return;
  }
  const recent = await ctx.host.recentMessages(task.id, RECENT_MESSAGES);
  // Its process died between storing the task and prompting the child: "continue" would be a task without its prompt.
  if (recent.length === 0 && task.resumeCount === 0) return parts.start(task).catch((error) => ctx.log.error(`Could not start task ${task.id} that its process left unprompted`, error));
  if (abortedUnderUs(task, recent)) return handleInterrupted(parts, task, onInterrupted);
  const verdict = judgeCompletion(task, recent);
  if (verdict.kind === "completed" && life.waitsForOwnTasks(task)) return;
  if (verdict.kind === "completed") life.settle(task.id, "completed", { result: verdict.result });
  else if (verdict.kind === "error") life.settle(task.id, "error", { error: verdict.error });
  else if (!isFreshPrompt(task, recent, ctx.clock.now())) await handleInterrupted(parts, task, onInterrupted);
}

async function handleInterrupted(parts: Parts, task: Task, onInterrupted: "resume" | "fail"): Promise<void> {
  const { ctx, life, notifier } = parts;
  if (onInterrupted === "fail") {
    life.settle(task.id, "error", { error: 'Interrupted: OpenCode stopped while the task was running (onInterrupted is "fail").' });
    return;
  }
  const claimed = claimContinue(parts, task);
  if (!claimed) return;
  life.progress.release(task.id);
  life.progress.track(task.id, claimed.progress);
  ctx.log.detach(`Could not notify parent session ${claimed.parentSessionID}`, notifier.deliver(claimed.parentSessionID));
  await life.sendPrompt(claimed, CONTINUE_PROMPT).catch((error) => ctx.log.error(`Could not resume interrupted task ${task.id}`, error));
}

/** Marks the task as told to continue, once even with two plugin instances, and queues a note for its parent. */
function claimContinue({ ctx, notifier }: Parts, task: Task): Task | undefined {
  const { store, clock } = ctx;
  return store.transaction(() => {
    const current = store.get(task.id);
    if (!current || current.promptedAt !== task.promptedAt || isSettled(current.status)) return undefined;
    current.promptedAt = clock.now();
    current.progress.lastActivityAt = current.promptedAt;
    store.save(current);
    store.appendEvent({ taskId: task.id, at: current.promptedAt, kind: "interrupted", detail: "told to continue" });
    if (current.notify !== false) notifier.recordNote(current, `interrupted-${current.promptedAt}`, interruptedNote(current), interruptedLine(current));
    return current;
  });
}

function interruptedNote(task: Task): string {
  return [
    `<background-task-notification task_id="${task.id}" status="${task.status}">`,
    `Background task "${task.description}" was interrupted by an OpenCode restart and has been told to continue. You will be notified when it finishes.`,
    "</background-task-notification>",
  ].join("\n");
}

/** A prompt sent in the last few seconds whose run has not started yet is not an interruption. */
/**
 * The child's last run was aborted while the task still counts as running: nobody cancelled it
 * (a cancel, or a user's abort heard by a running plugin, settles the task). OpenCode aborts the
 * runs of an instance it disposes before the plugin is disposed: that is an interruption.
 */
function abortedUnderUs(task: Task, recent: HostMessage[]): boolean {
  const last = recent.at(-1);
  return last?.role === "assistant" && last.aborted === true && last.createdAt >= task.promptedAt;
}

function isFreshPrompt(task: Task, recent: HostMessage[], now: number): boolean {
  return recent.at(-1)?.role === "user" && now - task.promptedAt < 5000;
}

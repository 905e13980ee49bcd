/** A background task: one child session working for a parent session. */
import type { Budget } from "./budget.ts";

export type TaskStatus = "queued" | "running" | "completed" | "error" | "cancelled" | "resumed";

export const SETTLED_STATUSES: readonly TaskStatus[] = ["completed", "error", "cancelled"];
/** A child session is working on it: its first run, or again after a resume. */
export const RUNNING_STATUSES: readonly TaskStatus[] = ["running", "resumed"];
/** Not settled: waiting for a slot or running. */
export const UNSETTLED_STATUSES: readonly TaskStatus[] = ["queued", ...RUNNING_STATUSES];

export type ModelRef = { providerID: string; modelID: string };

/**
 * A task's own git worktree (`repo`: the main checkout's top level); `workdir`: where the child
 * works in it when the project is a subfolder of the repository (absent: `path`); `changes`: the
 * block its result shows, set when it settles.
 */
export type TaskWorktree = { path: string; branch: string; base: string; repo: string; workdir?: string; changes?: string; removed?: WorktreeRemoval };

/** What became of a worktree whose directory is gone: by which action, and whether its branch was kept (it held commits not merged). */
export type WorktreeRemoval = { at: number; by: "merge" | "discard" | "clear"; branchKept: boolean };

export type TaskProgress = {
  /** Distinct tool calls the child has made (each call id counted once). */
  toolCalls: number;
  /** Names of the most recent tools, oldest first (at most 5). */
  lastTools: string[];
  /** Epoch ms of the last event seen from the child session. */
  lastActivityAt: number;
  /** While OpenCode retries a failed model call (live only, not stored). */
  retry?: { attempt: number; message: string; nextAt?: number };
  /** A permission the child is waiting for (live only, not stored). */
  permission?: string;
  /** Set by a hook, e.g. "continuation 1 of 2: report.md does not exist." (live only, not stored). */
  note?: string;
};

export type Task = {
  /** The child session id; also the task id. */
  id: string;
  parentSessionID: string;
  /** The parent message that launched it: tasks of one message form a batch. */
  batchId: string;
  description: string;
  prompt: string;
  agent: string;
  model: ModelRef;
  /** The parent's own agent and model, used when notifying it. */
  parentAgent: string;
  parentModel?: ModelRef;
  status: TaskStatus;
  isForked: boolean;
  /** False: settles put nothing in the parent's outbox (the launcher notifies by its own policy). Absent means true. */
  notify?: boolean;
  resumeCount: number;
  result?: string;
  error?: string;
  progress: TaskProgress;
  createdAt: number;
  /** Epoch ms of the latest prompt sent to the child (start or resume); while queued, the launch time. */
  promptedAt: number;
  /** Epoch ms when the child was first prompted (a queued task starts after it is created). */
  startedAt?: number;
  settledAt?: number;
  retrievedAt?: number;
  /**
   * Set while settling (by the evidence hook): the short evidence block shown after the result.
   * Not a tasks column: the evidence store keeps what it is made from.
   */
  evidence?: string;
  /** Set while settling: the spend of the task and its descendants as shown (`$0.081 · 15.0k tok`). Not a tasks column. */
  spent?: string;
  clearedAt?: number;
  /** The worker (another OpenCode server) the child runs on; absent: this OpenCode. */
  worker?: string;
  /** isolation "worktree": the git worktree the child works in (a nested task of it works there too, without its own). */
  worktree?: TaskWorktree;
  /** Its spending limit, counted over the task with its descendants; absent: none. */
  budget?: Budget;
};

const ALLOWED: Record<TaskStatus, readonly TaskStatus[]> = {
  queued: ["running", "cancelled", "error"],
  running: ["completed", "error", "cancelled"],
  resumed: ["completed", "error", "cancelled"],
  completed: ["resumed"],
  error: ["resumed"], // only a task stopped at its budget, resumed with a larger one (task-launcher.ts)
  cancelled: [],
};

export function isSettled(status: TaskStatus): boolean {
  return SETTLED_STATUSES.includes(status);
}

export class IllegalTransitionError extends Error {
  constructor(readonly from: TaskStatus, readonly to: TaskStatus) {
    super(`A task cannot go from ${from} to ${to}`);
  }
}

/**
 * The only way a task's status changes. Returns false (and changes nothing) when the task is
 * already in `to`, so settling twice is harmless; throws on any other illegal move.
 */
export function transition(task: Task, to: TaskStatus, now: number): boolean {
  if (task.status === to) return false;
  if (!ALLOWED[task.status].includes(to)) throw new IllegalTransitionError(task.status, to);
  task.status = to;
  if (isSettled(to)) task.settledAt = now;
  if (to === "resumed") {
    task.resumeCount += 1;
    task.settledAt = undefined;
    task.retrievedAt = undefined;
    task.result = undefined;
    task.error = undefined;
  }
  return true;
}

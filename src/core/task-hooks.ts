import type { Task } from "./task.ts";

/** How a finished run is taken: the task completes, the child is sent back to work, or the task fails. */
export type RunEndDecision =
  | { kind: "complete" }
  | { kind: "continue"; prompt: string; detail: string }
  | { kind: "error"; error: string };

/**
 * Extension points of the task core for concerns that live outside it (evidence, expectations,
 * milestones). All optional. A hook that throws is logged and counts as absent.
 */
export type TaskHooks = {
  /** A task was saved at launch, before it can start; `extras` is LaunchInput.extras, untouched. */
  launched?(task: Task, extras: unknown): void;
  /** A task's child was sent its first prompt (after any wait in the queue). */
  started?(task: Task): void;
  /** A child's run ended with an answer: awaited before the task settles as completed. */
  runEnded?(task: Task, result: string): Promise<RunEndDecision>;
  /** Inside every settle's transaction, before the parent's notification is recorded: may set `task.evidence`. */
  settling?(task: Task): void;
};

import type { Task } from "./task.ts";

/**
 * What a layer above the core (evidence, expectations, milestones) may do with running tasks,
 * and nothing more: it never reaches into the core's parts. Given to the hooks' builder
 * (ManagerParts.hooks) and by TaskManager.runningTasks().
 */
export type RunningTasks = {
  /** True while the task's child runs and its events are followed. */
  isRunning(taskId: string): boolean;
  get(taskId: string): Task | undefined;
  /** The worktree the task's child works in (its own or its launcher's); undefined: the project's checkout. */
  directoryOf(taskId: string): string | undefined;
  /** Ends the task as error (once; false when it had already settled) and aborts its child. */
  stop(taskId: string, error: string): boolean;
  /** A short live note shown in the task's progress line. */
  setProgressNote(taskId: string, note: string | undefined): void;
  /** A parent notice that never starts a turn, sent when the parent is idle (exactly once by key); `visible` is the person's line. */
  notifyParent(task: Task, key: string, text: string, visible?: string): void;
};

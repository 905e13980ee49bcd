/**
 * The statuses of an automation run (one firing) and the moves between them, as task.ts has for
 * tasks. A row is born waiting, starting, skipped or missed; only `transition` changes it after.
 */
export type RunStatus = "waiting" | "starting" | "running" | "completed" | "error" | "cancelled" | "skipped" | "missed";

/** A run that has been claimed and not ended: its task or its steps may still be going. */
export const ACTIVE_RUN: readonly RunStatus[] = ["starting", "running"];
/** How a run that started ends. */
export type RunEnd = "completed" | "error" | "cancelled";
export const RUN_ENDS: readonly RunEnd[] = ["completed", "error", "cancelled"];
/** The statuses a new row may have. */
export const NEW_RUN: readonly RunStatus[] = ["waiting", "starting", "skipped", "missed"];

const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  // Its turn came (starting), or it will not start: replaced by a newer firing, paused, done.
  waiting: ["starting", "skipped"],
  // Its task or steps began (running); ended before that (its task settled at once, the launch
  // failed, a crash cut it off); skipped: a crash cut it off before the launch and its event fires again.
  starting: ["running", ...RUN_ENDS, "skipped"],
  running: [...RUN_ENDS],
  completed: [],
  error: [],
  cancelled: [],
  skipped: [],
  missed: [],
};

export function isActiveRun(status: RunStatus): boolean {
  return ACTIVE_RUN.includes(status);
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return ALLOWED[from].includes(to);
}

export class IllegalRunTransitionError extends Error {
  constructor(readonly runId: number, readonly from: RunStatus, readonly to: RunStatus) {
    super(`Automation run ${runId} cannot go from ${from} to ${to}`);
  }
}

/**
 * The only way a run's status changes. Returns false (and changes nothing) when the run is
 * already in `to`; throws on any other illegal move.
 */
export function transition(run: { id: number; status: RunStatus }, to: RunStatus): boolean {
  if (run.status === to) return false;
  if (!canTransition(run.status, to)) throw new IllegalRunTransitionError(run.id, run.status, to);
  run.status = to;
  return true;
}

/** Throws unless a new row may be born with this status (a run never starts out running or ended). */
export function checkNewRun(run: { status: RunStatus }): void {
  if (!NEW_RUN.includes(run.status)) throw new Error(`A new automation run cannot be ${run.status}; it is born ${NEW_RUN.join(", ")}`);
}

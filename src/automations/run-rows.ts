import type { Run } from "./automation.ts";
import type { AutomationRepository, NewRun } from "../store/automation-repository.ts";
import { checkNewRun, transition, type RunStatus } from "./run-status.ts";

/** What may be written with a move, or on its own: anything but the status and the owner. */
export type RunFields = Omit<Partial<NewRun>, "status" | "automationId">;

/**
 * Every write of a run row by the automation layer: a new row, a status move (checked by
 * `transition`, against the row as stored), and fields that are not the status.
 */
export class RunRows {
  constructor(private store: AutomationRepository) {}

  /** Undefined when its (trigger, planned time) row exists already: another process fired it. */
  insert(run: NewRun): Run | undefined {
    checkNewRun(run);
    return this.store.insertRun(run);
  }

  /**
   * Moves the run to `to` with the fields that come with the move, in one transaction. False
   * (nothing written) when the row is gone or already in `to`; throws on an illegal move.
   */
  move(runId: number, to: RunStatus, fields: RunFields = {}): boolean {
    return this.store.transaction(() => {
      const current = this.store.run(runId);
      if (!current || !transition(current, to)) return false;
      this.store.updateRun(runId, { ...fields, status: to });
      return true;
    });
  }

  /** Fields that are not the status: a step's progress, a folded event. */
  note(runId: number, fields: RunFields): void {
    this.store.updateRun(runId, fields);
  }

  /** The run's task: the column that links the row to the core's task (set when the task is saved). */
  link(runId: number, taskId: string): void {
    this.store.updateRun(runId, { taskId });
  }

  /** The automation's waiting (queued) runs that will not start now. */
  skipWaiting(automationId: string, reason: string, summary?: string): void {
    for (const waiting of this.store.runsWithStatus(automationId, ["waiting"])) {
      this.move(waiting.id, "skipped", { skipReason: reason, ...(summary ? { summary } : {}) });
    }
  }
}

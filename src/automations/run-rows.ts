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

  /**
   * A firing that does not run. Folded into its trigger's newest row when that is a skip for the
   * same reason (its figures aside: `daily budget reached ($2.03 of $2.00)` goes on as
   * `($2.05 of $2.00)`) and no run of the automation came since: one row counts the streak, its
   * first firing createdAt, its latest endedAt, with the latest reason and event. Another
   * trigger's skips in between do not break it (each trigger has its streak). Else a new row;
   * undefined when its (trigger, planned time) is taken (another process fired it). In one
   * IMMEDIATE transaction (joined when the caller has one): processes on one database take turns,
   * so two never start rows of one streak. An event with a key keeps a row of its own (the key is
   * what stops it firing twice).
   */
  skip(run: NewRun & { skipReason: string }): Run | undefined {
    return this.store.transaction(() => {
      const found = run.eventKey === undefined ? this.store.latestOfTrigger(run.automationId, run.triggerId) : undefined;
      const latest = found && !found.runSince ? found.run : undefined;
      if (!latest || !continuesStreak(latest, run.skipReason)) return this.insert({ ...run, status: "skipped" });
      const fields: RunFields = {
        skipCount: (latest.skipCount ?? 1) + 1, endedAt: run.createdAt, skipReason: run.skipReason,
        ...(run.eventSummary !== undefined ? { eventSummary: run.eventSummary, eventData: run.eventData } : {}),
      };
      this.store.updateRun(latest.id, fields);
      return { ...latest, ...fields } as Run;
    });
  }

  /** The automation's waiting (queued) runs that will not start now. */
  skipWaiting(automationId: string, reason: string, summary?: string): void {
    for (const waiting of this.store.runsWithStatus(automationId, ["waiting"])) {
      this.move(waiting.id, "skipped", { skipReason: reason, ...(summary ? { summary } : {}) });
    }
  }
}

/** A skip reason without its figures: what stays the same along a streak. */
export function skipKind(reason: string): string {
  return reason.replace(/\$?\d[\d.,]*[kM]?/g, "#");
}

/** Whether a skip for `reason` goes on the streak of `latest` (its trigger's newest row, no run since). */
function continuesStreak(latest: Run, reason: string): boolean {
  return latest.status === "skipped" && latest.skipReason !== undefined && latest.eventKey === undefined && skipKind(latest.skipReason) === skipKind(reason);
}

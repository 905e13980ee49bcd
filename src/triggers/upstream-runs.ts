import type { Run } from "../automations/automation.ts";
import type { UpstreamRun } from "./trigger-source.ts";

const ENDED: Record<string, UpstreamRun["status"] | undefined> = {
  waiting: "active", starting: "active", running: "active", completed: "completed", error: "error", cancelled: "cancelled",
};

/**
 * An automation's runs above `afterRunId`, oldest first, as chained triggers see them: skipped
 * and missed rows are left out (nothing ran); an ended run carries its task's result, or its
 * summary (steps only, or the error). `newestFirst` is the runs table's newest rows.
 */
export function upstreamRuns(newestFirst: Run[], afterRunId: number, resultOf: (taskId: string) => string | undefined): UpstreamRun[] {
  return newestFirst.filter((run) => run.id > afterRunId && ENDED[run.status]).reverse().map((run) => {
    const status = ENDED[run.status]!;
    const taskResult = status === "completed" && run.taskId ? resultOf(run.taskId) : undefined;
    return {
      id: run.id, createdAt: run.createdAt, status, result: taskResult ?? run.summary ?? "",
      ...(run.runNo !== undefined ? { runNo: run.runNo } : {}),
    };
  });
}

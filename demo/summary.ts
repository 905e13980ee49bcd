/** The closing table: one row per task, from the plugin's own database. */
import { formatTable } from "../src/cli/format-table.ts";
import type { ProjectTask } from "../src/store/reads/task-reads.ts";
import type { PluginDatabase } from "./plugin-database.ts";
import { bold } from "./timeline.ts";

export function summaryTable(tasks: ProjectTask[], labelOf: (id: string) => string): string {
  return formatTable(tasks, [
    { header: "TASK", value: (t) => labelOf(t.id) },
    { header: "ID", value: (t) => t.id },
    { header: "DESCRIPTION", value: (t) => t.description, maxWidth: 24 },
    { header: "STATUS", value: (t) => t.status },
    { header: "DURATION", value: (t) => seconds((t.settledAt ?? Date.now()) - t.createdAt) },
    { header: "RESUMED", value: (t) => `${t.resumeCount}x` },
    { header: "TOOL CALLS", value: (t) => String(t.progress.toolCalls) },
  ]);
}

export function printSummary(db: PluginDatabase, parentID: string, labelOf: (id: string) => string): void {
  const tasks = db.tasksOf(parentID);
  console.log(`\n${bold("Summary")} (from the plugin's task database)\n`);
  for (const line of summaryTable(tasks, labelOf).trimEnd().split("\n")) console.log(`  ${line}`);
  console.log("  (duration: from launch to the last settle, resumes included)");
  const deliveries = tasks.flatMap((t) => db.notifiedDetails(t.id));
  const woke = deliveries.filter((d) => d === "woke parent").length;
  console.log(`  ${deliveries.length} notifications reached the parent; ${woke} of them started a parent turn.`);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

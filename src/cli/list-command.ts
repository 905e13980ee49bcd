import type { ReadModel } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import type { CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";
import { formatTime } from "../core/format-time.ts";
import { formatSpend } from "../cost/format-spend.ts";
import type { Spend } from "../cost/spend.ts";
import { spendKey } from "../store/reads/spend-reads.ts";

type SpentTask = ProjectTask & { spend?: Spend };

const COLUMNS: Column<SpentTask>[] = [
  { header: "ID", value: (t) => t.id },
  { header: "STATUS", value: (t) => (t.clearedAt === undefined ? t.status : `${t.status} (cleared)`) },
  { header: "AGENT", value: (t) => t.agent, maxWidth: 16 },
  { header: "WHERE", value: (t) => t.worker ?? "local", maxWidth: 16 },
  { header: "PROJECT", value: (t) => t.projectId, maxWidth: 16 },
  { header: "CREATED", value: (t) => formatTime(t.createdAt) },
  { header: "SPENT", value: (t) => (t.spend ? formatSpend(t.spend) : "-") },
  { header: "DESCRIPTION", value: (t) => t.description, maxWidth: 60 },
];

export function listCommand(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const tasks = withSpend(reader, reader.tasks.list({
    projectId: args.project,
    parentSessionID: args.parent,
    statuses: args.statuses,
    includeCleared: args.all,
  }));
  if (args.json) return io.stdout(JSON.stringify(tasks, null, 2) + "\n");
  if (tasks.length === 0) return io.stdout(noTasksMessage(args));
  io.stdout(formatTable(tasks, COLUMNS) + "\n" + summary(tasks) + "\n");
}

/** Each task with its spend and its descendants' (as background_output sums it); no field before its first model request. */
function withSpend(reader: ReadModel, tasks: ProjectTask[]): SpentTask[] {
  const trees = reader.spend.trees(tasks);
  return tasks.map((task) => {
    const spend = trees.get(spendKey(task.projectId, task.id));
    return spend ? { ...task, spend } : task;
  });
}

function summary(tasks: ProjectTask[]): string {
  const counts = new Map<string, number>();
  for (const task of tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1);
  const parts = [...counts].map(([status, count]) => `${count} ${status}`);
  return `${tasks.length} task${tasks.length === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

function noTasksMessage(args: CliArgs): string {
  const filtered = args.project || args.parent || args.statuses;
  const hint = args.all ? "" : " Cleared tasks are hidden; add --all to include them.";
  return `${filtered ? "No tasks match these filters." : "No tasks."}${hint}\n`;
}

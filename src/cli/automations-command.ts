import type { ProjectAutomation } from "../store/reads/automation-reads.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { firedByText, firstLine, isoTime, nextRunText, skippedText, stateText } from "../automations/automation-text.ts";
import type { Run, Trigger } from "../automations/automation.ts";
import { CliError } from "./cli-error.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import type { CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";
import { stepsBrief } from "../automations/step-text.ts";
import { runDayLines } from "../automations/run-day-text.ts";
import { formatSpend } from "../cost/format-spend.ts";
import type { Spend } from "../cost/spend.ts";
import { spendKey } from "../store/reads/spend-reads.ts";

const COLUMNS: Column<ProjectAutomation>[] = [
  { header: "ID", value: (a) => a.id },
  { header: "TITLE", value: (a) => a.title, maxWidth: 30 },
  { header: "STATE", value: (a) => stateText(a), maxWidth: 50 },
  { header: "TRIGGERS", value: (a) => a.triggers.map((t) => describeTrigger(t.spec)).join(", ") || "task_run only", maxWidth: 40 },
  { header: "NEXT RUN", value: (a) => nextRunText(a.triggers, a) },
  { header: "LAST RUN", value: (a) => (a.lastRun ? `#${a.lastRun.runNo ?? "-"} ${a.lastRun.status}` : "-") },
  { header: "PROJECT", value: (a) => a.projectId, maxWidth: 16 },
];

/** `automations`: every automation with its state (paused and why), triggers and next run. */
export function automationsCommand(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const all = reader.automations.list(args.project);
  if (args.json) return io.stdout(JSON.stringify(all, null, 2) + "\n");
  if (all.length === 0) return io.stdout("No automations.\n");
  io.stdout(formatTable(all, COLUMNS));
}

/** `runs <automation>`: its history, newest first. */
export function runsCommand(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const wanted = args.operands[0]!;
  const matches = reader.automations.list(args.project).filter((a) => a.id === wanted || a.id.startsWith(wanted));
  if (matches.length !== 1) {
    throw new CliError(matches.length ? `'${wanted}' matches ${matches.length} automations; give more of the id.` : `No automation has an id starting with '${wanted}'. Run \`opencode-errands automations\` to see them.`, 1);
  }
  const a = matches[0]!;
  const runs = withSpend(reader, a.projectId, reader.automations.runs(a.projectId, a.id, { limit: 200 }));
  const days = reader.automations.runDays(a.projectId, a.id);
  if (args.json) return io.stdout(JSON.stringify({ automation: a, runs, foldedDays: days }, null, 2) + "\n");
  const columns = runColumns(a.triggers);
  // Exit codes per step; their output tails are in --json.
  if (runs.some((r) => r.steps?.length)) columns.splice(-1, 0, { header: "STEPS", value: (r) => (r.steps ? stepsBrief(r.steps) : "-"), maxWidth: 60 });
  // Isolated runs: the branch each left its changes on (none: it changed nothing).
  if (runs.some((r) => r.branch)) columns.splice(-1, 0, { header: "BRANCH", value: (r) => r.branch ?? "-" });
  const folded = runDayLines(days).map((line) => `${line}\n`).join("");
  io.stdout(`${a.id} "${a.title}": ${stateText(a)}\n${runs.length ? formatTable(runs, columns) : "No runs yet.\n"}${folded}`);
}

type SpentRun = Run & { spend?: Spend };

/** A run's spend is its task's, with the tasks it launched (a resumed session's runs share one task). */
function withSpend(reader: ReadModel, projectId: string, runs: Run[]): SpentRun[] {
  const trees = reader.spend.trees([...new Set(runs.flatMap((r) => (r.taskId ? [r.taskId] : [])))].map((id) => ({ projectId, id })));
  return runs.map((r) => {
    const spend = r.taskId ? trees.get(spendKey(projectId, r.taskId)) : undefined;
    return spend ? { ...r, spend } : r;
  });
}

function runColumns(triggers: Trigger[]): Column<SpentRun>[] {
  const trigger = (r: Run) => triggers.find((t) => t.id === r.triggerId);
  return [
    { header: "WHEN", value: (r) => isoTime(r.startedAt ?? r.plannedAt ?? r.createdAt) },
    { header: "RUN", value: (r) => (r.runNo === undefined ? "-" : `#${r.runNo}`) },
    { header: "STATUS", value: (r) => (r.status === "missed" ? `missed ${r.missedCount} until ${isoTime(r.missedUntil)}` : r.status === "skipped" ? skippedText(r) : r.skipReason ? `${r.status} (${r.skipReason})` : r.status) },
    { header: "DURATION", value: (r) => (r.startedAt !== undefined && r.endedAt !== undefined ? `${((r.endedAt - r.startedAt) / 1000).toFixed(1)}s` : "-") },
    { header: "SPENT", value: (r) => (r.spend ? formatSpend(r.spend) : "-") },
    { header: "FIRED BY", value: (r) => firedByText(r, trigger(r)), maxWidth: 50 },
    { header: "NOTIFIED", value: (r) => (r.notified === undefined ? "-" : r.notified ? "yes" : `no: ${r.notifyNote}`), maxWidth: 40 },
    { header: "RESULT", value: (r) => firstLine(r.summary, 80) },
  ];
}

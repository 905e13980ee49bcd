import type { TaskEvent } from "../core/task-store.ts";
import type { ModelRef } from "../core/task.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import { CliError } from "./cli-error.ts";
import type { CliIo } from "./cli-io.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import { formatElapsed, formatTime } from "../core/format-time.ts";
import { evidenceDetails } from "../evidence/evidence-summary.ts";
import { workerText } from "./workers-command.ts";
import { formatSpend } from "../cost/format-spend.ts";
import { spendKey } from "../store/reads/spend-reads.ts";

export function showCommand(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const task = findOne(reader, args.operands[0]!);
  const events = reader.tasks.events(task.projectId, task.id);
  const evidence = reader.tasks.evidence(task);
  const spend = reader.spend.trees([task]).get(spendKey(task.projectId, task.id));
  if (args.json) return io.stdout(JSON.stringify({ ...task, ...(spend ? { spend } : {}), events, evidence }, null, 2) + "\n");
  const evidenceText = evidence.map(evidenceDetails).join("\n") + "\n";
  const where = task.worker === undefined ? "local" : workerText(task.worker, reader.workers.list(task.projectId).find((w) => w.name === task.worker));
  io.stdout([details(task, where, spend ? formatSpend(spend) : "nothing yet"), text("Prompt", task.prompt), outcome(task), evidenceText, timeline(task, events)].join("\n"));
}

function findOne(reader: ReadModel, prefix: string): ProjectTask {
  const matches = reader.tasks.findByIdPrefix(prefix);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new CliError(`No task has an id starting with '${prefix}'. Run \`opencode-errands list --all\` to see the ids.`, 1);
  }
  const shown = matches.slice(0, 5).map((t) => `  ${t.id}  (${t.projectId})`);
  const more = matches.length > 5 ? [`  ... and ${matches.length - 5} more`] : [];
  throw new CliError([`'${prefix}' matches ${matches.length} tasks; give more of the id:`, ...shown, ...more].join("\n"), 1);
}

function details(task: ProjectTask, where: string, spent: string): string {
  const fields: [string, string][] = [
    ["Project", task.projectId],
    ["Status", task.clearedAt === undefined ? task.status : `${task.status} (cleared)`],
    ["Runs on", where],
    ["Description", task.description],
    ["Agent", `${task.agent} (${model(task.model)})`],
    ["Parent", `${task.parentSessionID} (${task.parentAgent}${task.parentModel ? `, ${model(task.parentModel)}` : ""})`],
    ["Batch", task.batchId],
    ["Forked", task.isForked ? "yes" : "no"],
    ["Resumed", `${task.resumeCount} time${task.resumeCount === 1 ? "" : "s"}`],
    ["Progress", progress(task)],
    ["Spent", `${spent} (with the tasks it launched)`],
    ["Created", formatTime(task.createdAt)],
    ["Started", formatTime(task.startedAt)],
    ["Prompted", formatTime(task.promptedAt)],
    ["Settled", formatTime(task.settledAt)],
    ["Retrieved", formatTime(task.retrievedAt)],
    ["Cleared", formatTime(task.clearedAt)],
  ];
  const line = ([label, value]: [string, string]) => `  ${label.padEnd(13)}${value.replace(/\n/g, `\n${" ".repeat(15)}`)}`;
  return [`Task ${task.id}`, ...fields.map(line)].join("\n") + "\n";
}

function model(ref: ModelRef): string {
  return `${ref.providerID}/${ref.modelID}`;
}

function progress(task: ProjectTask): string {
  const { toolCalls, lastTools, lastActivityAt } = task.progress;
  const recent = lastTools.length ? `, last: ${lastTools.join(", ")}` : "";
  return `${toolCalls} tool call${toolCalls === 1 ? "" : "s"}${recent}; last activity ${formatTime(lastActivityAt)}`;
}

function text(title: string, body: string): string {
  return `${title}\n${body.replace(/^/gm, "  ")}\n`;
}

function outcome(task: ProjectTask): string {
  const parts = [];
  if (task.result !== undefined) parts.push(text("Result", task.result));
  if (task.error !== undefined) parts.push(text("Error", task.error));
  return parts.length ? parts.join("\n") : "Result\n  (none yet)\n";
}

function timeline(task: ProjectTask, events: TaskEvent[]): string {
  if (events.length === 0) return "Timeline\n  (no events recorded)\n";
  const kindWidth = Math.max(...events.map((e) => e.kind.length));
  const lines = events.map((e) => {
    const when = `${formatTime(e.at)} ${formatElapsed(e.at - task.createdAt).padStart(8)}`;
    return `  ${when}  ${e.kind.padEnd(kindWidth)}  ${e.detail ?? ""}`.trimEnd();
  });
  return ["Timeline", ...lines].join("\n") + "\n";
}

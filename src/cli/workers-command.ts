import type { ReadModel } from "../store/reads/read-model.ts";
import type { ProjectWorker } from "../store/reads/worker-reads.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import type { CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";
import { formatTime } from "../core/format-time.ts";

const COLUMNS: Column<ProjectWorker>[] = [
  { header: "NAME", value: (w) => w.name },
  { header: "HOST", value: (w) => w.host, maxWidth: 40 },
  { header: "HEALTH", value: (w) => w.state },
  { header: "SINCE", value: (w) => (w.state === "unknown" ? "-" : formatTime(w.since)) },
  { header: "RUNNING/CAPACITY", value: (w) => `${w.running}/${w.capacity}` },
  { header: "QUEUED", value: (w) => String(w.queued) },
  { header: "ERROR", value: (w) => w.error ?? "-", maxWidth: 60 },
  { header: "PROJECT", value: (w) => w.projectId, maxWidth: 16 },
];

/** `workers`: each worker (another OpenCode server) as its project's OpenCode last saw it, with the tasks it runs. */
export function workersCommand(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const workers = reader.workers.list(args.project);
  if (args.json) return io.stdout(JSON.stringify(workers, null, 2) + "\n");
  if (workers.length === 0) return io.stdout(`No workers configured. (They are listed once OpenCode has run the plugin with the option "workers".)\n`);
  io.stdout(formatTable(workers, COLUMNS));
}

/** A worker in a sentence: "worker box (10.0.0.5:4096, unreachable since …: why)". */
export function workerText(name: string, worker: ProjectWorker | undefined): string {
  if (!worker) return `worker ${name}`;
  const health = worker.state === "unknown" ? "not checked yet" : `${worker.state} since ${formatTime(worker.since)}${worker.error ? `: ${worker.error}` : ""}`;
  return `worker ${name} (${worker.host}, ${health})`;
}

import { costReport, type CostRow } from "../cost/cost-report.ts";
import { formatSpend, formatUsd } from "../cost/format-spend.ts";
import { countedTokens, type Spend } from "../cost/spend.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import { formatTime } from "../core/format-time.ts";
import type { CliIo } from "./cli-io.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import { formatTable, type Column } from "./format-table.ts";

const HEADERS = { automation: "AUTOMATION", model: "MODEL", day: "DAY" } as const;

/** `costs`: what background work cost since --since, by automation, model or day, the most first. */
export function costsCommand(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const by = args.by ?? "automation";
  const since = io.now() - (args.sinceMs ?? 7 * 86_400_000);
  const spend = reader.spend;
  const report = costReport(spend.spentTasks(args.project), spend.links(args.project), spend.runTasks(args.project), by, since);
  if (args.json) {
    const rows = report.rows.map((row) => ({ key: row.key, label: row.label, tasks: row.tasks, ...spendJson(row.spend) }));
    return io.stdout(JSON.stringify({ since: new Date(since).toISOString(), by, rows, total: spendJson(report.total) }, null, 2) + "\n");
  }
  const window = `since ${formatTime(since)}`;
  if (report.rows.length === 0) return io.stdout(`No model requests by background tasks ${window}.\n`);
  const columns: Column<CostRow>[] = [
    { header: HEADERS[by], value: (row) => row.label, maxWidth: 50 },
    { header: "SPENT", value: (row) => formatSpend(row.spend) },
    { header: "REQUESTS", value: (row) => String(row.spend.requests) },
    { header: "TASKS", value: (row) => String(row.tasks) },
  ];
  io.stdout(formatTable(report.rows, columns) + `Total ${window}: ${formatSpend(report.total)} (${report.total.requests} requests)\n`);
}

function spendJson(spend: Spend) {
  return { costUsd: spend.costUsd, cost: formatUsd(spend.costUsd), tokens: countedTokens(spend), tokensByKind: spend.tokens, requests: spend.requests };
}

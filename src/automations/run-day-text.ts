import type { RunDay } from "../store/run-history-fold.ts";
import { formatUsd } from "../cost/format-spend.ts";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const count = (n: number) => n.toLocaleString("en-US");

/** A folded day of quiet runs, as the CLI, the dashboard and task_read show it: `12 Nov: 1,412 quiet runs (1,410 ok, 2 skipped), $0.00`. */
export function runDayText(d: RunDay): string {
  const [year, month, day] = d.day.split("-").map(Number);
  const thisYear = new Date().getUTCFullYear() === year;
  const parts = [d.completed && `${count(d.completed)} ok`, d.skipped && `${count(d.skipped)} skipped`, d.missed && `${count(d.missed)} missed`].filter(Boolean);
  const total = d.completed + d.skipped + d.missed;
  return `${day} ${MONTHS[month! - 1]}${thisYear ? "" : ` ${year}`}: ${count(total)} quiet run${total === 1 ? "" : "s"} (${parts.join(", ")}), ${d.costUsd < 0.005 ? "$0.00" : formatUsd(d.costUsd)}`;
}

/** The folded days below a run list, or none; `days` newest first. */
export function runDayLines(days: RunDay[]): string[] {
  if (days.length === 0) return [];
  return ["Older quiet runs, folded by day (UTC; option historyRuns):", ...days.map((d) => `- ${runDayText(d)}`)];
}

import { costsByDay, type DayCost } from "../cost/cost-report.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import { chartDays, chartSince } from "./spend-chart.ts";

export type SpendDays = { byAutomation: DayCost[]; byModel: DayCost[]; days: string[] };

/** How long a chart is kept while no spend row was added: a row changed in place or purged shows within this. */
const KEEP_MS = 60_000;
type Kept = { key: string; mark: number; at: number; days: SpendDays };
const kept = new WeakMap<ReadModel, Map<string, Kept>>();

/**
 * The home page's charts: the last 30 days' spend per day, by automation and by model. Reading the
 * window costs tens of milliseconds at thousands of tasks and the page refreshes on every commit,
 * so the figures are kept per reader and project until a spend row is added, the day changes or a
 * minute has passed.
 */
export function spendDays(reader: ReadModel, project: string | undefined, now: number): SpendDays {
  const since = chartSince(now);
  const key = `${project ?? ""}\u0000${since}`;
  const mark = reader.spend.changeMark();
  const byProject = kept.get(reader) ?? new Map<string, Kept>();
  kept.set(reader, byProject);
  const hit = byProject.get(key);
  if (hit && hit.mark === mark && now - hit.at < KEEP_MS && now >= hit.at) return hit.days;
  const { spent, links, runs } = reader.spend.launchesSince(since, project);
  const days = { byAutomation: costsByDay(spent, links, runs, "automation", since), byModel: costsByDay(spent, links, runs, "model", since), days: chartDays(now) };
  byProject.set(key, { key, mark, at: now, days });
  return days;
}

import { addSpend, countedTokens, NO_SPEND, type Spend } from "./spend.ts";
import type { RunTask, SpentTask, TaskLink } from "../store/reads/spend-reads.ts";

export type CostGrouping = "automation" | "model" | "day";
/** One line of `costs`: what a group spent, and over how many launched tasks (a task with its descendants counts once). */
export type CostRow = { key: string | null; label: string; spend: Spend; tasks: number };
export type CostReport = { since: number; by: CostGrouping; rows: CostRow[]; total: Spend };

export const DIRECT_TASKS = "(direct tasks)";
const MAX_DEPTH = 64;

/**
 * What background work cost since `since`, grouped and sorted by cost (then tokens), most first.
 * A spend belongs to whoever launched it: the nearest task up its parent chain (itself included)
 * that an automation run launched, else the topmost task, a direct one. It counts at that launch's
 * creation time, so a run's spend (its task with its descendants) is counted whole or not at all.
 * By model: each task's own model (the database keeps no model per request).
 */
export function costReport(spent: SpentTask[], links: TaskLink[], runs: RunTask[], by: CostGrouping, since: number): CostReport {
  const groups = new Map<string, CostRow & { roots: Set<string> }>();
  for (const { task, root, run } of launches(spent, links, runs, since)) {
    const [groupKey, label] = groupOf(by, task, root, run);
    const mapKey = groupKey ?? "";
    const group = groups.get(mapKey) ?? { key: groupKey, label, spend: NO_SPEND, tasks: 0, roots: new Set<string>() };
    group.spend = addSpend(group.spend, task.spend);
    group.roots.add(taskKey(root.projectId, root.id));
    groups.set(mapKey, group);
  }
  const rows = [...groups.values()].map(({ roots, ...row }) => ({ ...row, tasks: roots.size }));
  rows.sort((a, b) => b.spend.costUsd - a.spend.costUsd || countedTokens(b.spend) - countedTokens(a.spend) || a.label.localeCompare(b.label));
  return { since, by, rows, total: rows.reduce((sum, row) => addSpend(sum, row.spend), NO_SPEND) };
}

/** Each spent task with the task that launched it (and that launch's run), for launches since `since`. */
function* launches(spent: SpentTask[], links: TaskLink[], runs: RunTask[], since: number): Generator<{ task: SpentTask; root: TaskLink; run?: RunTask }> {
  const tasks = new Map(links.map((t) => [taskKey(t.projectId, t.id), t]));
  const runOf = new Map(runs.map((r) => [taskKey(r.projectId, r.id), r]));
  for (const task of spent) {
    const root = launcher(task, (id) => tasks.get(taskKey(task.projectId, id)), (id) => runOf.has(taskKey(task.projectId, id)));
    if (root.createdAt >= since) yield { task, root, run: runOf.get(taskKey(root.projectId, root.id)) };
  }
}

function taskKey(projectId: string, id: string): string {
  return `${projectId}\u0000${id}`;
}

/** The task that launched this spend: the nearest run's task up the chain, else the topmost task. */
function launcher(task: SpentTask, parentTask: (id: string) => TaskLink | undefined, isRunTask: (id: string) => boolean): TaskLink {
  let current: TaskLink = task;
  for (let depth = 0; depth < MAX_DEPTH && !isRunTask(current.id); depth++) {
    const parent = parentTask(current.parentId);
    if (!parent) break;
    current = parent;
  }
  return current;
}

function groupOf(by: CostGrouping, task: SpentTask, root: TaskLink, run: RunTask | undefined): [string | null, string] {
  if (by === "model") return [task.model, task.model];
  if (by === "day") {
    const day = localDay(root.createdAt);
    return [day, day];
  }
  if (!run) return [null, DIRECT_TASKS];
  return [run.automationId, run.title ? `${run.title} (${run.automationId})` : run.automationId];
}

function localDay(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** What one group spent on one day (local): a bar segment of the dashboard's per-day chart. */
export type DayCost = { day: string; key: string | null; label: string; spend: Spend };

/**
 * What background work cost per day since `since`, by automation or model: each spend counted on
 * its launch's day and group, as `costReport` counts it. Days with nothing spent are absent.
 */
export function costsByDay(spent: SpentTask[], links: TaskLink[], runs: RunTask[], by: "automation" | "model", since: number): DayCost[] {
  const cells = new Map<string, DayCost>();
  for (const { task, root, run } of launches(spent, links, runs, since)) {
    const [groupKey, label] = groupOf(by, task, root, run);
    const day = localDay(root.createdAt);
    const cellKey = `${day}\u0000${groupKey ?? ""}`;
    const cell = cells.get(cellKey) ?? { day, key: groupKey, label, spend: NO_SPEND };
    cells.set(cellKey, { ...cell, spend: addSpend(cell.spend, task.spend) });
  }
  return [...cells.values()].sort((a, b) => a.day.localeCompare(b.day) || a.label.localeCompare(b.label));
}

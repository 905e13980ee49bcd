/**
 * The chaos run's verdict (issue 34), shared by `npm run bench -- chaos` and
 * test/integration/chaos.test.ts: pure, so that test/unit/chaos-check.test.ts can show it fail on
 * synthetic logs. Input is what the run observed: each process's life, the model requests of every
 * child (keyed by its script, not by session), the database's tasks and runs, and the notices the
 * parents hold.
 */

/** One `opencode serve` process from its start until it was killed or stopped. */
export type ProcLife = { proc: string; startedAt: number; endedAt?: number };
/** A model request of one child: `key` names the task ("T17") or the run ("au_x#3"). */
export type ChildRequest = { proc: string; key: string; at: number; endedAt?: number };
export type TaskRow = {
  key: string; id: string; status: string; result?: string | null; error?: string | null;
  createdAt: number; settledAt?: number | null;
  /** What the child's script makes of it. */
  expected: { status: string; result?: string };
};
export type RunRow = {
  automationId: string; runNo: number | null; triggerId: string | null; plannedAt: number | null;
  status: string; createdAt: number; startedAt?: number | null; taskId?: string | null; summary?: string | null;
};
export type ChaosObservation = {
  procs: ProcLife[];
  requests: ChildRequest[];
  tasks: TaskRow[];
  /** Task ids the launching tool answered with, by key. */
  launched: Array<{ key: string; id: string }>;
  /** Task notices found in the parents (one entry per message): results, and "running" interruption notes. */
  notices: Array<{ taskId: string; status: string }>;
  runs: RunRow[];
  /** Each task's status as the CLI's export shows it (another reader of the same database). */
  cliTasks?: Array<{ id: string; status: string }>;
  /** Run notices found in the report sessions of automations that notify always. */
  runNotices: Array<{ automationId: string; runNo: number }>;
  /** Automations that notify always (every ended run is told). */
  notifyingAutomations: string[];
  /** When the checks were read, and how long a task or run may still be going before it is stuck. */
  checkedAt: number;
  stuckAfterMs: number;
  /** A request later than this after its task settled is a child still driven after the end. */
  lateAfterMs?: number;
};

export type ChaosVerdict = {
  lost: string[]; doubled: string[]; stuck: string[]; wrong: string[];
  counts: Record<string, number>;
};

const SETTLED = new Set(["completed", "error", "cancelled"]);
const RUN_ENDED = new Set(["completed", "error", "cancelled", "skipped", "missed"]);

export function checkChaos(o: ChaosObservation): ChaosVerdict {
  const v: ChaosVerdict = { lost: [], doubled: [], stuck: [], wrong: [], counts: {} };
  checkTasks(o, v);
  checkRequests(o, v);
  checkRuns(o, v);
  return v;
}

export const isClean = (v: ChaosVerdict) => v.lost.length + v.doubled.length + v.stuck.length + v.wrong.length === 0;

function checkTasks(o: ChaosObservation, v: ChaosVerdict): void {
  const byKey = groupBy(o.tasks, (t) => t.key);
  const ids = new Set(o.tasks.map((t) => t.id));
  for (const l of o.launched) if (!ids.has(l.id)) v.lost.push(`${l.key}: launched as ${l.id}, no such task in the database`);
  for (const [key, rows] of byKey) if (rows.length > 1) v.doubled.push(`${key}: ${rows.length} tasks for one launch (${rows.map((r) => r.id).join(", ")})`);
  // A "running" notice is the note that a restart interrupted the task and told it to continue, not its result.
  const notices = groupBy(o.notices.filter((n) => SETTLED.has(n.status)), (n) => n.taskId);
  v.counts["interrupted notes"] = o.notices.length - [...notices.values()].flat().length;
  for (const t of o.tasks) {
    if (!SETTLED.has(t.status)) {
      if (o.checkedAt - t.createdAt > o.stuckAfterMs) v.stuck.push(`${t.key} ${t.id}: ${t.status} ${Math.round((o.checkedAt - t.createdAt) / 1000)} s after launch`);
      continue;
    }
    const told = notices.get(t.id) ?? [];
    if (told.length === 0) v.lost.push(`${t.key} ${t.id}: settled ${t.status}, the parent was never told`);
    if (told.length > 1) v.doubled.push(`${t.key} ${t.id}: the parent was told ${told.length} times (${told.map((n) => n.status).join(", ")})`);
    if (told.some((n) => n.status !== t.status)) v.wrong.push(`${t.key} ${t.id}: told ${told.map((n) => n.status).join(", ")}, stored ${t.status}`);
    if (t.status !== t.expected.status) v.wrong.push(`${t.key} ${t.id}: ${t.status} (${t.error ?? t.result ?? ""}), its script says ${t.expected.status}`);
    else if (t.expected.result !== undefined && t.result !== t.expected.result) v.wrong.push(`${t.key} ${t.id}: result ${JSON.stringify(t.result)}, its script says ${JSON.stringify(t.expected.result)}`);
  }
  const cli = new Map((o.cliTasks ?? []).map((t) => [t.id, t.status]));
  if (o.cliTasks) for (const t of o.tasks) if (cli.get(t.id) !== t.status) v.wrong.push(`${t.key} ${t.id}: the CLI shows ${cli.get(t.id) ?? "no such task"}, the database ${t.status}`);
  v.counts.tasks = o.tasks.length;
  v.counts.launched = o.launched.length;
  for (const t of o.tasks) v.counts[`task ${t.status}`] = (v.counts[`task ${t.status}`] ?? 0) + 1;
}

/** A child is driven by one process at a time: no two requests open at once, no switch to another process while the first lives, nothing after it settled. */
function checkRequests(o: ChaosObservation, v: ChaosVerdict): void {
  const life = new Map(o.procs.map((p) => [p.proc, p]));
  const settledAt = new Map<string, number>();
  for (const t of o.tasks) if (t.settledAt) settledAt.set(t.key, t.settledAt);
  for (const [key, list] of groupBy(o.requests, (r) => r.key)) {
    const reqs = [...list].sort((a, b) => a.at - b.at);
    const found = new Set<string>();
    for (let i = 1; i < reqs.length; i++) {
      const [prev, cur] = [reqs[i - 1], reqs[i]];
      const open = reqs.slice(0, i).find((r) => (r.endedAt ?? o.checkedAt) > cur.at);
      if (open) found.add(`two requests open at once (${open.proc} at ${iso(open.at)}, ${cur.proc} at ${iso(cur.at)})`);
      const prevLife = life.get(prev.proc);
      if (cur.proc !== prev.proc && prevLife && (prevLife.endedAt ?? Infinity) > cur.at) {
        found.add(`driven by ${prev.proc} and ${cur.proc} while both lived (switch at ${iso(cur.at)})`);
      }
    }
    const settled = settledAt.get(key);
    const late = settled !== undefined ? reqs.filter((r) => r.at > settled + (o.lateAfterMs ?? 2000)) : [];
    if (late.length > 0) found.add(`${late.length} request(s) after it settled at ${iso(settled!)} (last ${late.at(-1)!.proc} at ${iso(late.at(-1)!.at)})`);
    for (const what of found) v.doubled.push(`${key}: ${what}`);
  }
  v.counts.requests = o.requests.length;
  v.counts["children with requests from 2+ processes"] = [...groupBy(o.requests, (r) => r.key).values()].filter((rs) => new Set(rs.map((r) => r.proc)).size > 1).length;
}

function checkRuns(o: ChaosObservation, v: ChaosVerdict): void {
  const fired = o.runs.filter((r) => r.triggerId !== null && r.plannedAt !== null && r.runNo !== null);
  for (const [occ, rows] of groupBy(fired, (r) => `${r.automationId} at ${iso(r.plannedAt!)}`)) {
    if (rows.length > 1) v.doubled.push(`${occ}: occurrence fired ${rows.length} times (runs #${rows.map((r) => r.runNo).join(", #")})`);
  }
  for (const [taskId, rows] of groupBy(o.runs.filter((r) => r.taskId), (r) => r.taskId!)) {
    if (rows.length > 1) v.doubled.push(`${taskId}: one task for ${rows.length} runs (${rows.map((r) => `${r.automationId}#${r.runNo}`).join(", ")})`);
  }
  for (const r of o.runs) {
    if (RUN_ENDED.has(r.status)) continue;
    const since = r.startedAt ?? r.createdAt;
    if (o.checkedAt - since > o.stuckAfterMs) v.stuck.push(`${r.automationId}#${r.runNo}: ${r.status} ${Math.round((o.checkedAt - since) / 1000)} s`);
  }
  const told = groupBy(o.runNotices, (n) => `${n.automationId}#${n.runNo}`);
  const notifying = new Set(o.notifyingAutomations);
  for (const r of o.runs) {
    if (!notifying.has(r.automationId) || r.runNo === null || !["completed", "error"].includes(r.status)) continue;
    const n = told.get(`${r.automationId}#${r.runNo}`)?.length ?? 0;
    if (n === 0) v.lost.push(`${r.automationId}#${r.runNo}: ended ${r.status}, its report session was never told`);
    if (n > 1) v.doubled.push(`${r.automationId}#${r.runNo}: told ${n} times`);
  }
  for (const r of o.runs) v.counts[`run ${r.status}`] = (v.counts[`run ${r.status}`] ?? 0) + 1;
}

export function formatVerdict(v: ChaosVerdict, limit = 20): string {
  const section = (name: string, items: string[]) =>
    [`${name}: ${items.length}`, ...items.slice(0, limit).map((i) => `  - ${i}`), ...(items.length > limit ? [`  ... ${items.length - limit} more`] : [])];
  return [
    ...section("lost", v.lost), ...section("doubled", v.doubled), ...section("stuck", v.stuck), ...section("wrong outcome", v.wrong),
    `counts: ${Object.entries(v.counts).sort().map(([k, n]) => `${k} ${n}`).join(", ")}`,
  ].join("\n");
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    out.set(k, [...(out.get(k) ?? []), item]);
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);

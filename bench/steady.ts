/**
 * Days, not minutes: one real `opencode serve` with many frequent automations, left to run.
 * 20 steps-only automations every 2 s and 4 with a mock prompt every 20 s (BENCH_STEADY_STEPS,
 * BENCH_STEADY_PROMPTS), option historyRuns 200 so that the history's bound is reached within the
 * run. First a baseline: the same process with the automations created but paused; then they run
 * for BENCH_STEADY_MINUTES (default 30; the first BENCH_STEADY_WARMUP_MINUTES, default 5, are
 * warm-up); then they are paused again. Every BENCH_STEADY_SAMPLE_SECONDS (default 60) it samples
 * the server's RSS (VmRSS), the plugin's database (file + WAL), OpenCode's own data and the logs.
 * Prints the RSS slope after warm-up (least squares, MB per hour; goal under 5), bytes per run,
 * the database size it levels off at, and what firing costs in memory against the paused baseline.
 * Run alone with `nice -n 10 npx tsx bench/steady.ts`, or `npm run bench -- steady`.
 */
import { existsSync, readdirSync, readFileSync, statSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startStack, call, toolOutputs, type Stack } from "../test/harness/plugin-stack.ts";
import { startMockModel } from "../test/harness/mock-model.ts";
import { openSqlite } from "../src/store/sqlite-driver.ts";
import { median } from "./stats.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
export type SteadyConfig = { minutes: number; warmupMinutes: number; baselineMinutes: number; sampleSeconds: number; steps: number; prompts: number; historyRuns: number };
export const defaultSteadyConfig = (): SteadyConfig => ({
  minutes: env("BENCH_STEADY_MINUTES", 30),
  warmupMinutes: env("BENCH_STEADY_WARMUP_MINUTES", 5),
  baselineMinutes: env("BENCH_STEADY_BASELINE_MINUTES", 3),
  sampleSeconds: env("BENCH_STEADY_SAMPLE_SECONDS", 60),
  steps: env("BENCH_STEADY_STEPS", 20),
  prompts: env("BENCH_STEADY_PROMPTS", 4),
  historyRuns: env("BENCH_STEADY_HISTORY_RUNS", 200),
});

export type Sample = { atMin: number; phase: "baseline" | "running" | "paused"; rssMB: number; dbBytes: number; opencodeBytes: number; logBytes: number; runRows: number; firings: number };

export async function runSteadyBench(config = defaultSteadyConfig()): Promise<Sample[]> {
  const dir = mkdtempSync(join(tmpdir(), "bench-steady-"));
  const dbPath = join(dir, "errands.db");
  const mock = await startMockModel();
  const stack = await startStack({
    mock, pluginOptions: { dbPath, historyRuns: config.historyRuns },
    config: { permission: { background_automation: "allow", bash: "allow" } },
  });
  const samples: Sample[] = [];
  const started = Date.now();
  const sample = (phase: Sample["phase"]) => {
    const s = { atMin: (Date.now() - started) / 60_000, phase, rssMB: rssMB(stack.server.pid), dbBytes: dbBytes(dbPath), opencodeBytes: dirBytes(join(stack.server.homeDir, ".local/share/opencode"), "log"), logBytes: dirBytes(join(stack.server.homeDir, ".local/share/opencode/log")) + stack.server.logs().length, ...counts(dbPath) };
    samples.push(s);
    if (process.env.BENCH_VERBOSE !== "0") console.log(`${s.atMin.toFixed(1).padStart(5)} min ${phase.padEnd(8)} RSS ${s.rssMB.toFixed(0)} MB, db ${mb(s.dbBytes)}, opencode data ${mb(s.opencodeBytes)}, logs ${mb(s.logBytes)}, run rows ${s.runRows}, firings ${s.firings}`);
  };
  const phase = async (name: Sample["phase"], minutes: number) => {
    const end = Date.now() + minutes * 60_000;
    while (Date.now() < end) {
      await sleep(Math.min(config.sampleSeconds * 1000, end - Date.now()));
      sample(name);
    }
  };
  try {
    const parent = await stack.newSession("bench: steady");
    await stack.say(parent, "REPLY warm");
    const ids = await createPaused(stack, parent, config);
    await phase("baseline", config.baselineMinutes);
    await setEnabled(stack, parent, ids, true);
    await phase("running", config.minutes);
    await setEnabled(stack, parent, ids, false);
    await phase("paused", config.baselineMinutes);
    report(samples, config, dbPath);
    return samples;
  } finally {
    await stack.stop();
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** All automations in one turn (one CALL line each), paused: the baseline is the same process with them stored. */
async function createPaused(stack: Stack, parent: string, c: SteadyConfig): Promise<string[]> {
  const calls = [
    ...Array.from({ length: c.steps }, (_, i) => call("task_create", { title: `steady steps ${i}`, steps: [{ name: "check", run: "true" }], triggers: [{ every: "2s" }], notify: "never", enabled: false })),
    ...Array.from({ length: c.prompts }, (_, i) => call("task_create", { title: `steady prompt ${i}`, prompt: `REPLY steady ${i}`, triggers: [{ every: "20s" }], notify: "never", enabled: false })),
  ];
  await stack.say(parent, calls.join("\n"));
  const ids = (await toolOutputs(stack, parent, "task_create")).map((out) => /automation (au\w+)/.exec(out)?.[1]).filter((id): id is string => !!id);
  if (ids.length !== calls.length) throw new Error(`task_create made ${ids.length} of ${calls.length} automations`);
  return ids;
}

async function setEnabled(stack: Stack, parent: string, ids: string[], enabled: boolean): Promise<void> {
  const before = (await toolOutputs(stack, parent, "task_update")).length;
  await stack.say(parent, ids.map((id) => call("task_update", { id, enabled })).join("\n"));
  const done = (await toolOutputs(stack, parent, "task_update")).length - before;
  if (done !== ids.length) throw new Error(`task_update answered ${done} of ${ids.length} calls`);
}

/** Run rows now, and firings in all (rows plus the runs folded into days). */
function counts(dbPath: string): { runRows: number; firings: number } {
  const db = openSqlite(dbPath, { readonly: true });
  try {
    const rows = Number(db.prepare("SELECT count(*) AS n FROM automation_runs").get()!.n);
    const folded = Number(db.prepare("SELECT coalesce(sum(completed + skipped + missed), 0) AS n FROM automation_run_days").get()!.n);
    const skippedExtra = Number(db.prepare("SELECT coalesce(sum(skip_count - 1), 0) AS n FROM automation_runs WHERE skip_count > 1").get()!.n);
    return { runRows: rows, firings: rows + skippedExtra + folded };
  } finally {
    db.close();
  }
}

/** Bytes per run row of automation_runs and each of its indexes (dbstat), at the end. */
function rowBytes(dbPath: string): string {
  const db = openSqlite(dbPath, { readonly: true });
  try {
    const rows = Number(db.prepare("SELECT count(*) AS n FROM automation_runs").get()!.n);
    const parts = db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'automation_run%' GROUP BY name ORDER BY bytes DESC").all();
    return parts.map((p) => `${p.name} ${(Number(p.bytes) / Math.max(rows, 1)).toFixed(0)}`).join(", ") + ` (bytes per row, ${rows} rows)`;
  } finally {
    db.close();
  }
}

export function report(samples: Sample[], c: SteadyConfig, dbPath?: string): void {
  const running = samples.filter((s) => s.phase === "running");
  const warm = running.filter((s) => s.atMin >= c.baselineMinutes + c.warmupMinutes);
  const baseline = samples.filter((s) => s.phase === "baseline");
  const paused = samples.filter((s) => s.phase === "paused");
  const slope = slopePerHour(warm.map((s) => [s.atMin, s.rssMB]));
  const error = slopeError(warm.map((s) => [s.atMin, s.rssMB]));
  const first = running[0];
  const last = running.at(-1);
  console.log(`\nsteady: ${c.steps} steps-only automations every 2 s and ${c.prompts} with a mock prompt every 20 s, historyRuns ${c.historyRuns}, ${c.minutes} min running (${c.warmupMinutes} warm-up), samples every ${c.sampleSeconds} s`);
  if (!first || !last || warm.length < 3) return void console.log("too short to tell: fewer than 3 samples after warm-up");
  const perMin = (last.firings - first.firings) / (last.atMin - first.atMin);
  console.log(`firings: ${last.firings} in all (${perMin.toFixed(0)} a minute); run rows kept at the end: ${last.runRows}`);
  console.log(`RSS slope after warm-up (least squares over ${warm.length} samples): ${slope.toFixed(1)} ± ${error.toFixed(1)} MB/h (standard error; goal < 5: ${Math.abs(slope) < 5 ? "met" : "NOT met"}); RSS ${Math.min(...warm.map((s) => s.rssMB)).toFixed(0)}-${Math.max(...warm.map((s) => s.rssMB)).toFixed(0)} MB`);
  console.log(`memory while firing: median ${median(warm.map((s) => s.rssMB)).toFixed(0)} MB against ${median(baseline.map((s) => s.rssMB)).toFixed(0)} MB paused before (${median(paused.map((s) => s.rssMB)).toFixed(0)} MB paused after)`);
  // Bytes per run before the first fold removed any (run rows only grow until then), from the second
  // running sample on: the first includes the WAL file growing to its checkpoint size.
  const firstFold = running.findIndex((s, i) => i > 0 && s.runRows < running[i - 1]!.runRows);
  const early = running.slice(1, firstFold < 0 ? undefined : firstFold);
  const growth = early.length > 1 ? (early.at(-1)!.dbBytes - early[0]!.dbBytes) / Math.max(early.at(-1)!.runRows - early[0]!.runRows, 1) : Number.NaN;
  console.log(`bytes per run row before the first fold (database file + WAL growth / rows added): ${growth.toFixed(0)}${dbPath ? `; at the end: ${rowBytes(dbPath)}` : ""}`);
  const tail = warm.slice(Math.floor(warm.length / 2));
  const dbSlope = slopePerHour(tail.map((s) => [s.atMin, s.dbBytes / 1e6]));
  console.log(`database: ${mb(last.dbBytes)} at the end, ${mb(Math.max(...tail.map((s) => s.dbBytes)))} at most over the last half (slope there ${dbSlope.toFixed(1)} MB/h; it levels off: ${dbSlope < 1 ? "yes" : "NO"})`);
  console.log(`OpenCode's own data: ${mb(first.opencodeBytes)} -> ${mb(last.opencodeBytes)}; logs ${mb(first.logBytes)} -> ${mb(last.logBytes)}`);
}

/** The standard error of that slope, per hour: how far the samples' scatter leaves it uncertain. */
export function slopeError(points: [number, number][]): number {
  const n = points.length;
  if (n < 3) return Number.NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const b = slopePerHour(points) / 60;
  const residuals = points.reduce((a, [x, y]) => a + (y - my - b * (x - mx)) ** 2, 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return Math.sqrt(residuals / (n - 2) / sxx) * 60;
}

/** Least-squares slope of [minute, value] points, per hour. */
export function slopePerHour(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return (sxy / sxx) * 60;
}

function rssMB(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/)?.[1] ?? Number.NaN) / 1024;
}

function dbBytes(path: string): number {
  return [path, `${path}-wal`].reduce((sum, p) => sum + (existsSync(p) ? statSync(p).size : 0), 0);
}

function dirBytes(dir: string, skip?: string): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === skip) continue;
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(path) : entry.isFile() ? statSync(path).size : 0;
  }
  return total;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  runSteadyBench().then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

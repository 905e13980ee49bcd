/**
 * Shared database: 10,000 tasks, and a second process writing 10 task rows a second. Measures the
 * stall this process's store puts on the event loop while it lists tasks the way the core does
 * (on every poll and settle: the unsettled tasks, and a parent's unsettled tasks; once a second a
 * background_list: one parent's 200 tasks), with the writer off, with it on, and with it on
 * against the store's former full reload.
 * Run alone with `npx tsx bench/shared-db.ts` (Node) or `npx bun bench/shared-db.ts` (Bun).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { UNSETTLED_STATUSES } from "../src/core/task.ts";
import type { TaskFilter } from "../src/core/task-store.ts";
import type { TaskSummary } from "../src/core/task-summary.ts";
import { openSqlite } from "../src/store/sqlite-driver.ts";
import { SqliteTaskStore } from "../src/store/sqlite-task-store.ts";
import { TaskCache } from "../src/store/task-cache.ts";
import { rowToTask } from "../src/store/task-row.ts";
import { benchTask } from "./bench-tasks.ts";
import { percentile } from "./stats.ts";

const PROJECT = "bench";
const RUNNING = 20;
const TICK_MS = 50;
const TICKS_PER_BACKGROUND_LIST = 20;
const GOAL_P99_MS = 5;
const WRITER = fileURLToPath(new URL("./shared-db-writer.ts", import.meta.url));

export type Lister = { list(filter: TaskFilter): TaskSummary[]; close(): void };
export type Mode = { label: string; writer: boolean; open: (path: string) => Lister };
/** Wall time of each tick (the stall the event loop sees) and its CPU time (without other processes' share of the machine). */
export type SharedDbRow = { label: string; ticks: number; p50: number; p99: number; max: number; cpuP99: number; rowsWritten: number };

export async function runSharedDbBench({ tasks = 10_000, seconds = 20, rate = 10, print = true } = {}): Promise<SharedDbRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "obt-shared-"));
  try {
    const modes: Mode[] = [
      { label: "writer off", writer: false, open: (path) => SqliteTaskStore.open({ path, projectId: PROJECT }) },
      { label: `writer on, ${rate} rows/s: reads what changed`, writer: true, open: (path) => SqliteTaskStore.open({ path, projectId: PROJECT }) },
      { label: `writer on, ${rate} rows/s: full reload (before)`, writer: true, open: (path) => new FullReload(path) },
    ];
    const rows: SharedDbRow[] = [];
    for (const [i, mode] of modes.entries()) {
      const path = join(dir, `shared-${i}.db`);
      seed(path, tasks);
      rows.push(await measure(mode, path, seconds, rate));
    }
    if (print) report(rows, tasks, seconds);
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function seed(path: string, count: number): void {
  const store = SqliteTaskStore.open({ path, projectId: PROJECT });
  store.transaction(() => {
    for (let i = 0; i < count; i++) store.save(benchTask(i, i >= RUNNING));
  });
  store.close();
}

/** Lists on a fixed tick for `seconds`, timing each tick's synchronous work: that is the stall. */
export async function measure(mode: Mode, path: string, seconds: number, rate: number): Promise<SharedDbRow> {
  const lister = mode.open(path);
  let tick = 0;
  const listOnce = () => {
    lister.list({ statuses: UNSETTLED_STATUSES, includeCleared: true });
    lister.list({ parentSessionID: "ses_parent_7", statuses: UNSETTLED_STATUSES, includeCleared: true });
    if (tick++ % TICKS_PER_BACKGROUND_LIST === 0) lister.list({ parentSessionID: "ses_parent_7" });
  };
  listOnce(); // the first load after open is not the steady state
  const writer = mode.writer ? await startWriter(path, rate) : undefined;
  const stalls: number[] = [];
  const cpu: number[] = [];
  const timer = setInterval(() => {
    const start = performance.now();
    const startCpu = process.cpuUsage();
    listOnce();
    const used = process.cpuUsage(startCpu);
    stalls.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
  }, TICK_MS);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  clearInterval(timer);
  const rowsWritten = writer ? await writer.stop() : 0;
  lister.close();
  return {
    label: mode.label,
    ticks: stalls.length,
    p50: percentile(stalls, 50),
    p99: percentile(stalls, 99),
    max: Math.max(...stalls),
    cpuP99: percentile(cpu, 99),
    rowsWritten,
  };
}

async function startWriter(path: string, rate: number): Promise<{ stop(): Promise<number> }> {
  const child = spawn(process.execPath.includes("bun") ? "node" : process.execPath, ["--import", "tsx", WRITER, path, PROJECT, String(rate)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  while (!out.includes("writing")) await once(child.stdout!, "data");
  return {
    async stop() {
      child.stdin!.end();
      await once(child, "exit");
      return Number(out.match(/wrote (\d+)/)?.[1] ?? 0);
    },
  };
}

/** The store's former refresh: any data_version change reloaded and decoded every task of the project. */
class FullReload implements Lister {
  private readonly db;
  private cache: TaskCache | undefined;
  private version = -1;

  constructor(path: string) {
    this.db = openSqlite(path);
  }

  list(filter: TaskFilter): TaskSummary[] {
    const version = Number(this.db.prepare("PRAGMA data_version").get()?.data_version);
    if (!this.cache || version !== this.version) {
      this.version = version;
      const rows = this.db.prepare("SELECT * FROM tasks WHERE project_id = ? ORDER BY created_at, rowid").all(PROJECT);
      this.cache = new TaskCache(rows.map(rowToTask));
    }
    return this.cache.list(filter);
  }

  close(): void {
    this.db.close();
  }
}

function report(rows: SharedDbRow[], tasks: number, seconds: number): void {
  const runtime = typeof Bun !== "undefined" ? `Bun ${Bun.version}, bun:sqlite` : `Node ${process.version}, better-sqlite3`;
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  console.log(`\nShared database: ${runtime}; ${tasks.toLocaleString("en-US")} tasks; the store lists every ${TICK_MS} ms for ${seconds} s`);
  console.log(`(the unsettled tasks and a parent's unsettled tasks, as the core on each poll and settle; every ${TICKS_PER_BACKGROUND_LIST}th tick`);
  console.log("a background_list of one parent's 200 tasks); the stall is that synchronous work, CPU p99 the process's CPU time in it.");
  console.log(`${"".padEnd(46)}${"p50".padStart(11)}${"p99".padStart(11)}${"max".padStart(11)}${"CPU p99".padStart(11)}   rows written`);
  for (const row of rows) {
    const figures = [row.p50, row.p99, row.max, row.cpuP99].map((n) => ms(n).padStart(11)).join("");
    console.log(`${row.label.padEnd(46)}${figures}   ${row.rowsWritten}`);
  }
  const [, ours, before] = rows;
  console.log(`full reload / reads what changed, p99: ${(before!.p99 / ours!.p99).toFixed(0)}x`);
  console.log(`Goal: stall p99 under ${GOAL_P99_MS} ms with the writer on: ${ours!.p99 < GOAL_P99_MS ? "met" : "NOT MET"} (${ms(ours!.p99)})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runSharedDbBench().then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { transition } from "../src/core/task.ts";
import { SqliteTaskStore } from "../src/store/sqlite-task-store.ts";
import { benchTask, RESULT } from "./bench-tasks.ts";
import { JsonFileTaskStore } from "./json-file-task-store.ts";
import { median, percentile, timeMs } from "./stats.ts";
import { formatStoreBench } from "./store-report.ts";

export { formatStoreBench };

export type StoreBenchOptions = { listTasks: number; settleTasks: number; listRuns: number };

export type StoreBenchResult = StoreBenchOptions & {
  runtime: string;
  dir: string;
  sqlite: { listMedianMs: number; listFirstMs: number; settleP50Ms: number; settleP95Ms: number };
  json: { listMedianMs: number; listFirstMs: number; settleP50Ms: number; settleP95Ms: number; fileBytes: number };
  goals: { listUnder20Ms: boolean; settle20xFaster: boolean };
};

const DEFAULTS: StoreBenchOptions = { listTasks: 10_000, settleTasks: 1_000, listRuns: 15 };

/** Lists and settles tasks in the SQLite store and in a whole-file JSON store, in one run. */
export function runStoreBench(options: Partial<StoreBenchOptions> = {}): StoreBenchResult {
  const opts = { ...DEFAULTS, ...options };
  const dir = mkdtempSync(join(tmpdir(), "obt-bench-"));
  try {
    const sqlite = { ...sqliteList(dir, opts), ...sqliteSettle(dir, opts.settleTasks) };
    const json = { ...jsonList(dir, opts), ...jsonSettle(dir, opts.settleTasks) };
    const goals = {
      listUnder20Ms: sqlite.listMedianMs < 20,
      settle20xFaster: json.settleP50Ms / sqlite.settleP50Ms >= 20 && json.settleP95Ms / sqlite.settleP95Ms >= 20,
    };
    return { ...opts, runtime: runtimeName(), dir: tmpdir(), sqlite, json, goals };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function seedTasks(count: number) {
  return Array.from({ length: count }, (_, i) => benchTask(i, i % 2 === 0));
}

function sqliteList(dir: string, { listTasks, listRuns }: StoreBenchOptions) {
  const path = join(dir, "list.db");
  const seeding = SqliteTaskStore.open({ path, projectId: "bench" });
  seeding.transaction(() => seedTasks(listTasks).forEach((task) => seeding.save(task)));
  seeding.close();
  const store = SqliteTaskStore.open({ path, projectId: "bench" });
  const listFirstMs = timeMs(() => assertCount(store.list(), listTasks));
  const runs = Array.from({ length: listRuns }, () => timeMs(() => assertCount(store.list(), listTasks)));
  store.close();
  return { listFirstMs, listMedianMs: median(runs) };
}

function jsonList(dir: string, { listTasks, listRuns }: StoreBenchOptions) {
  const path = join(dir, "list.json");
  new JsonFileTaskStore(path).seed(seedTasks(listTasks));
  const store = new JsonFileTaskStore(path);
  const listFirstMs = timeMs(() => assertCount(store.load(), listTasks));
  const runs = Array.from({ length: listRuns }, () => timeMs(() => assertCount(store.list(), listTasks)));
  return { listFirstMs, listMedianMs: median(runs), fileBytes: statSync(path).size };
}

/** Settling: status and result updated and saved, and (SQLite only, as they keep none) the event logged, in one transaction as the plugin does. */
function sqliteSettle(dir: string, count: number) {
  const store = SqliteTaskStore.open({ path: join(dir, "settle.db"), projectId: "bench" });
  const tasks = Array.from({ length: count }, (_, i) => benchTask(i, false));
  store.transaction(() => tasks.forEach((task) => store.save(task)));
  store.list();
  const samples = tasks.map((task, i) =>
    timeMs(() =>
      store.transaction(() => {
        settle(task, i);
        store.save(task);
        store.appendEvent({ taskId: task.id, at: task.settledAt!, kind: "status:completed" });
      }),
    ),
  );
  store.close();
  return { settleP50Ms: percentile(samples, 50), settleP95Ms: percentile(samples, 95) };
}

function jsonSettle(dir: string, count: number) {
  const store = new JsonFileTaskStore(join(dir, "settle.json"));
  const tasks = Array.from({ length: count }, (_, i) => benchTask(i, false));
  store.seed(tasks);
  const samples = tasks.map((task, i) =>
    timeMs(() => {
      settle(task, i);
      store.save(task);
    }),
  );
  return { settleP50Ms: percentile(samples, 50), settleP95Ms: percentile(samples, 95) };
}

function settle(task: ReturnType<typeof benchTask>, i: number): void {
  transition(task, "completed", task.createdAt + 60_000 + i);
  task.result = RESULT;
}

function assertCount(tasks: unknown[], expected: number): void {
  if (tasks.length !== expected) throw new Error(`listed ${tasks.length} tasks, expected ${expected}`);
}

function runtimeName(): string {
  return typeof Bun !== "undefined" ? `Bun ${Bun.version}, bun:sqlite` : `Node ${process.version}, better-sqlite3`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(formatStoreBench(runStoreBench()));
}

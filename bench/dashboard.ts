/**
 * Dashboard: a database with 10,000 tasks and 100 automations (with triggers and 2,000 runs),
 * against a baseline of the same pages over a database with 10 tasks and 1 automation, in one
 * run. Measures the home page's first byte and full body over HTTP, its full render in a real
 * Chromium (navigation to the load event), and the live update latency: from a commit by
 * another connection to the page showing it, in the Chromium test/harness/browser.ts launches.
 * Run alone with `npm run bench -- dashboard`.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Automation, Run, Trigger } from "../src/automations/automation.ts";
import { AutomationRepository } from "../src/store/automation-repository.ts";
import { startDashboard, type Dashboard } from "../src/dashboard/dashboard-server.ts";
import { SqliteTaskStore } from "../src/store/sqlite-task-store.ts";
import { launchBrowser } from "../test/harness/browser.ts";
import { benchTask } from "./bench-tasks.ts";
import { median, percentile } from "./stats.ts";
import { measure as measureStall, seed as seedShared, type SharedDbRow } from "./shared-db.ts";

const VIEWER = fileURLToPath(new URL("./dashboard-viewer.ts", import.meta.url));
const STALL_SECONDS = 10;

const GOALS = { firstByteMs: 100, renderMs: 500, liveP95Ms: 1000 };
const HTTP_SAMPLES = 30;
const RENDER_SAMPLES = 10;
const LIVE_SAMPLES = 30;

/** The little of the DOM the page-side functions use (this project compiles without the DOM types). */
type Dom = { document: { body: { innerText: string }; getElementById(id: string): { classList: { contains(c: string): boolean } } | null } };
type Size = { label: string; tasks: number; automations: number; runsEach: number };
type Figures = { label: string; firstByte: number[]; body: number[]; bytes: number; render: number[]; live: number[] };

export async function runDashboardBench(): Promise<Figures[]> {
  const sizes: Size[] = [
    { label: "10 tasks, 1 automation (baseline)", tasks: 10, automations: 1, runsEach: 20 },
    { label: "10,000 tasks, 100 automations", tasks: 10_000, automations: 100, runsEach: 20 },
  ];
  const dir = mkdtempSync(join(tmpdir(), "obt-dash-bench-"));
  const browser = await launchBrowser();
  try {
    const results: Figures[] = [];
    for (const size of sizes) {
      const path = join(dir, `${size.tasks}.db`);
      seed(path, size);
      const dash = await startDashboard({ dbPath: path, port: 0, host: "127.0.0.1" });
      try {
        results.push(await measure(size.label, dash, path, browser));
      } finally {
        await dash.close();
      }
    }
    print(results);
    printStall(await stallWithDashboard(dir));
    return results;
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function seed(path: string, size: Size): void {
  const store = SqliteTaskStore.open({ path, projectId: "bench" });
  const autos = new AutomationRepository(store.db, "bench");
  const now = Date.now();
  store.transaction(() => {
    for (let i = 0; i < size.tasks; i++) {
      const task = benchTask(i, i >= 20); // 20 running, the rest settled
      store.save(i % 50 === 7 ? { ...task, status: "error", error: "provider said no", result: undefined, settledAt: now - 3_600_000 } : task);
      if (i < 200) store.appendEvent({ taskId: task.id, at: task.createdAt, kind: "launched", detail: "general" });
    }
    for (let a = 0; a < size.automations; a++) {
      const automation: Automation = {
        id: `au${String(a).padStart(6, "0")}`, title: `Nightly check ${a}`, prompt: "Run the suite and report.", agent: "general",
        notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip", reportTo: "ses_parent_0", reportAgent: "build",
        enabled: a % 10 !== 3, ...(a % 10 === 3 ? { pausedReason: "paused after 3 failed runs" } : {}),
        createdBy: "ses_parent_0", createdAt: now - 86_400_000, updatedAt: now, runCount: size.runsEach, consecutiveFailures: 0,
      };
      autos.saveAutomation(automation);
      const trigger: Trigger = { id: `tr${a}`, automationId: automation.id, spec: { kind: "interval", every: "1h", everyMs: 3_600_000 }, createdAt: now - 86_400_000, nextAt: now + 3_600_000 };
      autos.saveTrigger(trigger);
      for (let r = 0; r < size.runsEach; r++) {
        const startedAt = now - (size.runsEach - r) * 3_600_000;
        const run: Omit<Run, "id"> = { automationId: automation.id, runNo: r + 1, triggerId: trigger.id, firedBy: "schedule", plannedAt: startedAt,
          status: r % 7 === 6 ? "error" : "completed", createdAt: startedAt, startedAt, endedAt: startedAt + 20_000 + r * 500, summary: "all green" };
        autos.insertRun(run);
      }
    }
  });
  store.close();
}

async function measure(label: string, dash: Dashboard, path: string, browser: Awaited<ReturnType<typeof launchBrowser>>): Promise<Figures> {
  const cookie = `obt_dashboard=${dash.token}`;
  const http = { firstByte: [] as number[], body: [] as number[], bytes: 0 };
  for (let i = 0; i < HTTP_SAMPLES; i++) {
    const sample = await timedGet(dash.origin + "/", cookie);
    http.firstByte.push(sample.firstByte);
    http.body.push(sample.total);
    http.bytes = sample.bytes;
  }
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(dash.url);
  const render: number[] = [];
  for (let i = 0; i < RENDER_SAMPLES; i++) {
    await page.goto(dash.origin + "/", { waitUntil: "load" });
    render.push(await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation" as never)[0] as unknown as { loadEventEnd: number; startTime: number };
      return nav.loadEventEnd - nav.startTime;
    }));
  }
  await page.waitForFunction(() => (globalThis as unknown as Dom).document.getElementById("live")?.classList.contains("on"));
  const live = await liveLatency(page, path);
  await context.close();
  return { label, ...http, render, live };
}

/** Renames a running task from another connection and times until the page shows the new name. */
async function liveLatency(page: import("playwright-core").Page, path: string): Promise<number[]> {
  const store = SqliteTaskStore.open({ path, projectId: "bench" });
  const samples: number[] = [];
  try {
    const task = store.get(store.list({ statuses: ["running"] })[0]!.id)!;
    for (let i = 0; i < LIVE_SAMPLES; i++) {
      const marker = `live-marker-${i}`;
      const seen = page.waitForFunction((m) => (globalThis as unknown as Dom).document.body.innerText.includes(m), marker, { polling: "raf" })
        .then(() => page.evaluate(() => Date.now()));
      const committedAt = Date.now();
      store.save({ ...task, description: marker });
      samples.push((await seen) - committedAt);
    }
  } finally {
    store.close();
  }
  return samples;
}

function timedGet(url: string, cookie: string): Promise<{ firstByte: number; total: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = request(url, { headers: { cookie } }, (res) => {
      const firstByte = performance.now() - start;
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("end", () => (res.statusCode === 200 ? resolve({ firstByte, total: performance.now() - start, bytes }) : reject(new Error(`GET / answered ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

function print(results: Figures[]): void {
  const [base, big] = results as [Figures, Figures];
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const row = (name: string, pick: (f: Figures) => number[], p: number, goal?: number) => {
    const a = percentile(pick(base), p);
    const b = percentile(pick(big), p);
    const verdict = goal === undefined ? "" : b < goal ? `  goal < ${goal} ms: met` : `  goal < ${goal} ms: MISSED`;
    console.log(`${name.padEnd(34)} ${ms(b).padStart(10)} ${ms(a).padStart(10)} ${(b / a).toFixed(2).padStart(7)}x${verdict}`);
  };
  console.log(`Dashboard home page under Node (${HTTP_SAMPLES} HTTP gets, ${RENDER_SAMPLES} browser loads, ${LIVE_SAMPLES} live updates each)`);
  console.log(`${"".padEnd(34)} ${"10k/100".padStart(10)} ${"baseline".padStart(10)} ${"ratio".padStart(8)}`);
  row("first byte, p50", (f) => f.firstByte, 50);
  row("first byte, p95", (f) => f.firstByte, 95, GOALS.firstByteMs);
  row("full body, p50", (f) => f.body, 50);
  row("browser render to load, p50", (f) => f.render, 50);
  row("browser render to load, p95", (f) => f.render, 95, GOALS.renderMs);
  row("live update latency, p50", (f) => f.live, 50);
  row("live update latency, p95", (f) => f.live, 95, GOALS.liveP95Ms);
  console.log(`page size: ${(big.bytes / 1024).toFixed(0)} KB (baseline ${(base.bytes / 1024).toFixed(0)} KB); live median ${ms(median(big.live))}`);
}

/**
 * The shared-db benchmark's store stall (10,000 tasks, another process writing 10 rows a second),
 * with no dashboard and with one open in a third process that re-reads the home page on every change.
 */
async function stallWithDashboard(dir: string): Promise<{ closed: SharedDbRow; open: SharedDbRow; refreshes: number }> {
  const open = (path: string) => SqliteTaskStore.open({ path, projectId: "bench" });
  const closedPath = join(dir, "stall-closed.db");
  seedShared(closedPath, 10_000);
  const closed = await measureStall({ label: "dashboard closed", writer: true, open }, closedPath, STALL_SECONDS, 10);
  const openPath = join(dir, "stall-open.db");
  seedShared(openPath, 10_000);
  const viewer = spawn(process.execPath, ["--import", "tsx", VIEWER, openPath], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  viewer.stdout!.on("data", (chunk) => (out += chunk));
  while (!out.includes("viewing")) await once(viewer.stdout!, "data");
  const opened = await measureStall({ label: "dashboard open", writer: true, open }, openPath, STALL_SECONDS, 10);
  viewer.stdin!.end();
  await once(viewer, "exit");
  return { closed, open: opened, refreshes: Number(out.match(/refreshed (\d+)/)?.[1] ?? 0) };
}

function printStall({ closed, open, refreshes }: { closed: SharedDbRow; open: SharedDbRow; refreshes: number }): void {
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  console.log(`\nPlugin store stall (shared-db bench: 10,000 tasks, a writer at 10 rows/s, ${STALL_SECONDS} s), Node`);
  for (const row of [closed, open]) console.log(`${row.label.padEnd(18)} p50 ${ms(row.p50).padStart(9)}  p99 ${ms(row.p99).padStart(9)}  max ${ms(row.max).padStart(9)}  (${row.rowsWritten} rows written)`);
  console.log(`open / closed, p99: ${(open.p99 / closed.p99).toFixed(2)}x; the open page re-read the home page ${refreshes} times`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runDashboardBench();

/**
 * Dashboard: a database with 10,000 tasks and 100 automations (with triggers and 2,000 runs),
 * against a baseline of the same pages over a database with 10 tasks and 1 automation, in one
 * run. Measures the home page's first byte and full body over HTTP, its full render in a real
 * Chromium (navigation to the load event), and the live update latency: from a commit by
 * another connection to the page showing it. Needs a Chromium (see test/harness/browser.ts).
 * Run alone with `npm run bench -- dashboard`.
 */
import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Automation, Run, Trigger } from "../src/automations/automation.ts";
import { AutomationStore } from "../src/automations/automation-store.ts";
import { startDashboard, type Dashboard } from "../src/dashboard/dashboard-server.ts";
import { SqliteTaskStore } from "../src/store/sqlite-task-store.ts";
import { launchBrowser } from "../test/harness/browser.ts";
import { benchTask } from "./bench-tasks.ts";
import { median, percentile } from "./stats.ts";

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
    return results;
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function seed(path: string, size: Size): void {
  const store = SqliteTaskStore.open({ path, projectId: "bench" });
  const autos = new AutomationStore(store.db, "bench");
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

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runDashboardBench();

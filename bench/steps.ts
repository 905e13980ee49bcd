/**
 * Steps-only automations: `{ steps: [{ name: "check", run: "true" }] }`.
 * 1. On the real host, fired every second (BENCH_STEPS_SECONDS runs, default 60, after 5 warm-up
 *    runs): the model requests the runs caused (goal 0), each run's wall time (run row started to
 *    ended), and the server's CPU per run (with its children, less its idle rate measured before
 *    and after; OpenCode's own idle work varies, so this figure is rough). Most of it is not the
 *    steps: every run checks its report-to session with one session.get, which alone cost the
 *    server about 36 ms of CPU when measured from outside (2026-11-26).
 * 2. In one process, as inside OpenCode (Bun) and under Node: 100 runs through the automation
 *    layer on a host that answers at once, CPU and wall per run, against runShell("true") alone
 *    and `sh -c true` spawned directly. This is the plugin's own cost per run, without the noise.
 * Run alone with `npx tsx bench/steps.ts` (under the real-host lock), or call runStepsBench().
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startStack, call, toolOutputs, waitUntil } from "../test/harness/plugin-stack.ts";
import { startMockModel } from "../test/harness/mock-model.ts";
import { openSqlite } from "../src/store/sqlite-driver.ts";
import { percentile } from "./stats.ts";

type Spread = { p50: number; p99: number; mean: number };
export type RealHostSteps = { runs: number; modelRequests: number; wallMs: Spread; stepMs: Spread; cpuMsPerRun: number; idleMsPerSecond: [number, number] };
export type InProcessSteps = { runtime: string; run: { wallMs: Spread; cpuMs: number }; runShell: { wallMs: Spread; cpuMs: number }; direct: { wallMs: Spread; cpuMs: number } };

const TICK_MS = 1000 / 100; // /proc reports CPU in clock ticks (USER_HZ, 100 on Linux)
const IN_PROCESS_RUNS = 100;

/** CPU of a process and its reaped children, in ms (utime + stime + cutime + cstime). */
function processCpuMs(pid: number | "self"): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) * TICK_MS;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const spread = (samples: number[]): Spread => ({ p50: percentile(samples, 50), p99: percentile(samples, 99), mean: samples.reduce((a, b) => a + b, 0) / samples.length });
const ms = (n: number) => `${n.toFixed(1)} ms`;

export async function runStepsBench({ runs = Number(process.env.BENCH_STEPS_SECONDS ?? 60), print = true } = {}): Promise<{ realHost: RealHostSteps; node: InProcessSteps }> {
  const realHost = await realHostBench(runs);
  if (print) reportRealHost(realHost);
  const node = await inProcessBench("Node");
  if (print) reportInProcess(node);
  const bun = spawnSync("npx", ["bun", "bench/steps.ts", "--in-process"], { stdio: "inherit" });
  if (bun.status !== 0) throw new Error("the in-process steps benchmark under Bun failed");
  return { realHost, node };
}

async function realHostBench(runs: number): Promise<RealHostSteps> {
  const dir = mkdtempSync(join(tmpdir(), "bench-steps-"));
  const dbPath = join(dir, "tasks.db");
  const mock = await startMockModel();
  const stack = await startStack({ mock, pluginOptions: { dbPath }, config: { permission: { background_automation: "allow", bash: "allow" } } });
  try {
    const parent = await stack.newSession("bench: steps");
    const pid = stack.server.pid;
    const idleRate = async () => {
      const start = processCpuMs(pid);
      await sleep(10_000);
      return (processCpuMs(pid) - start) / 10_000;
    };
    await stack.say(parent, "REPLY warm"); // OpenCode's first-turn setup happens here, not in a window
    const idleBefore = await idleRate();
    const warmup = 5;
    await stack.say(parent, call("task_create", { title: "bench steps", steps: [{ name: "check", run: "true" }], triggers: [{ every: "1s" }], max_runs: runs + warmup, notify: "never" }));
    const created = (await toolOutputs(stack, parent, "task_create"))[0] ?? "";
    const id = /automation (au\w+)/.exec(created)?.[1];
    if (!id) throw new Error(`task_create did not create the automation: ${created}`);
    type Row = { status: string; started_at: number; ended_at: number | null; steps: string };
    const read = () => {
      const conn = openSqlite(dbPath, { readonly: true });
      try {
        return conn.prepare("SELECT status, started_at, ended_at, steps FROM automation_runs WHERE automation_id = ? AND run_no IS NOT NULL ORDER BY id").all(id) as Row[];
      } finally {
        conn.close();
      }
    };
    const endedCount = () => read().filter((r) => r.ended_at !== null).length;
    await waitUntil(() => endedCount() >= warmup || undefined, { timeoutMs: 60_000, what: "the warm-up runs" });
    const requestsBefore = mock.requests({ includeTitle: true }).length;
    const cpuStart = processCpuMs(pid);
    const endedBefore = endedCount();
    const started = performance.now();
    await waitUntil(() => endedCount() >= runs + warmup || undefined, { timeoutMs: runs * 1000 + 60_000, what: `${runs} runs` });
    const windowMs = performance.now() - started;
    const cpuUsed = processCpuMs(pid) - cpuStart;
    const modelRequests = mock.requests({ includeTitle: true }).length - requestsBefore;
    const idleAfter = await idleRate();
    const done = read().slice(warmup);
    const failed = done.filter((r) => r.status !== "completed");
    if (failed.length > 0) throw new Error(`${failed.length} runs did not complete: ${failed[0]!.status}`);
    const counted = done.length - (endedBefore - warmup);
    return {
      runs: done.length,
      modelRequests,
      wallMs: spread(done.map((r) => r.ended_at! - r.started_at)),
      stepMs: spread(done.map((r) => (JSON.parse(r.steps) as { durationMs: number }[])[0]!.durationMs)),
      cpuMsPerRun: (cpuUsed - ((idleBefore + idleAfter) / 2) * windowMs) / counted,
      idleMsPerSecond: [idleBefore * 1000, idleAfter * 1000],
    };
  } finally {
    await stack.stop();
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs through the automation layer (fake host, real shells), runShell alone, and plain spawns, one after another. */
async function inProcessBench(runtime: string): Promise<InProcessSteps> {
  const { automationFixture, tempDb, PARENT } = await import("../test/helpers/automation-fixture.ts");
  const { parseSteps } = await import("../src/automations/step-spec.ts");
  const { runShell } = await import("../src/triggers/run-shell.ts");
  const db = tempDb();
  const dir = mkdtempSync(join(tmpdir(), "bench-steps-project-"));
  const f = automationFixture(db.path, {}, { loaders: {} as never, directory: dir });
  try {
    f.host.setActivity(PARENT, "idle");
    f.runs.start();
    const a = f.create({ prompt: "", steps: parseSteps([{ name: "check", run: "true" }]), notify: "never" });
    const oneRun = async () => {
      const { run } = await f.runs.runNow(a.id);
      await f.runs.starter.steps.whenDone(run.id);
      if (f.autoStore.run(run.id)!.status !== "completed") throw new Error(`a run ended ${f.autoStore.run(run.id)!.status}`);
    };
    const measure = async (fn: () => Promise<unknown>) => {
      for (let i = 0; i < 5; i++) await fn();
      const walls: number[] = [];
      const cpu = processCpuMs("self");
      for (let i = 0; i < IN_PROCESS_RUNS; i++) {
        const t = performance.now();
        await fn();
        walls.push(performance.now() - t);
      }
      return { wallMs: spread(walls), cpuMs: (processCpuMs("self") - cpu) / IN_PROCESS_RUNS };
    };
    return {
      runtime,
      run: await measure(oneRun),
      runShell: await measure(() => runShell("true", { cwd: dir, timeoutMs: 10_000 })),
      direct: await measure(() => new Promise<void>((resolve, reject) => {
        const child = spawn("/bin/sh", ["-c", "true"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
        child.on("error", reject);
        child.on("close", () => resolve());
      })),
    };
  } finally {
    f.close();
    db.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

function reportRealHost(r: RealHostSteps): void {
  console.log(`steps-only automation, ${r.runs} runs fired every second on a real opencode serve:`);
  console.log(`  model requests during the runs: ${r.modelRequests} (goal 0: ${r.modelRequests === 0 ? "met" : "NOT met"})`);
  console.log(`  wall per run (run row started -> ended): p50 ${ms(r.wallMs.p50)}, p99 ${ms(r.wallMs.p99)}, mean ${ms(r.wallMs.mean)}; the step itself p50 ${ms(r.stepMs.p50)}, p99 ${ms(r.stepMs.p99)}`);
  console.log(`  server CPU per run (with children, less its idle ${r.idleMsPerSecond.map((n) => n.toFixed(0)).join("/")} ms/s before/after; rough): ${ms(r.cpuMsPerRun)}`);
}

function reportInProcess(r: InProcessSteps): void {
  const line = (label: string, m: { wallMs: Spread; cpuMs: number }) =>
    `  ${label.padEnd(36)} wall p50 ${ms(m.wallMs.p50)}, p99 ${ms(m.wallMs.p99)}; CPU ${ms(m.cpuMs)} (with the child)`;
  console.log(`in one process under ${r.runtime}, ${IN_PROCESS_RUNS} each, one after another:`);
  console.log(line("a steps-only run (automation layer)", r.run));
  console.log(line("runShell(\"true\") alone", r.runShell));
  console.log(line("sh -c true spawned directly", r.direct));
  console.log(`  a run costs ${(r.run.cpuMs / r.direct.cpuMs).toFixed(1)}x the CPU and ${(r.run.wallMs.p50 / r.direct.wallMs.p50).toFixed(1)}x the wall time (p50) of a direct spawn`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href || process.argv.includes("--in-process")) {
  const main = process.argv.includes("--in-process")
    ? inProcessBench(typeof Bun !== "undefined" ? "Bun" : "Node").then(reportInProcess)
    : runStepsBench().then(() => undefined);
  main.then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

declare const Bun: unknown;

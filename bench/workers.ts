/**
 * Workers: 60 children whose one tool call runs a CPU-bound command for 2 s each, on the local
 * OpenCode alone (12 slots) against the local one (4 slots) plus 2 workers (4 each), all three
 * `opencode serve` processes on this machine. So the figure is about dispatch overhead and
 * fairness, not speed-up: wall time, each server's peak RSS, and how long after a child's last
 * answer left the model its task settled (the result noticed), remote children against local ones
 * (goal: within 50 ms of each other). Run alone with `npx tsx bench/workers.ts` (under the
 * real-host lock), or call runWorkersBench().
 */
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { startStack, call, waitUntil, queryDb } from "../test/harness/plugin-stack.ts";
import { defaultResponder, lastUserText, startMockModel, type MockModel, type MockRequest } from "../test/harness/mock-model.ts";
import { freePort, startOpencode, type OpencodeServer } from "../test/harness/opencode-server.ts";
import { percentile } from "./stats.ts";

const CHILDREN = Number(process.env.BENCH_WORKERS_CHILDREN ?? 60);
const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;
const BURN = "timeout 2 sh -c 'while :; do :; done'; true";

type Run = { label: string; wallMs: number; peakRssMb: Record<string, number>; settleMs: { local: number[]; remote: number[] }; placed: Record<string, number> };

/** A child's prompt holds CPU2S: it calls bash once with the 2 s burn, then answers. */
function responder(req: MockRequest) {
  const text = lastUserText(req);
  const job = /CPU2S (\d+)/.exec(JSON.stringify(req.body.messages.filter((m) => m.role === "user").slice(0, 2)))?.[1];
  const toolDone = req.body.messages.at(-1)?.role === "tool";
  if (job && !text.includes("CALL") && !req.isTitle) return toolDone ? { text: `done ${job}` } : { toolCalls: [{ name: "bash", args: { command: BURN, description: "burn 2 s" } }] };
  return defaultResponder(req);
}

function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function runOnce(mock: MockModel, label: string, withWorkers: boolean): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-bench-workers-"));
  const servers: Record<string, OpencodeServer> = {};
  const configs = [];
  if (withWorkers) {
    for (const name of ["box", "cube"]) {
      const server = await startOpencode({ model: mock.url, env: { OPENCODE_SERVER_PASSWORD: PASSWORD }, port: await freePort() });
      servers[name] = server;
      configs.push({ name, url: server.url, passwordEnv: "BENCH_WORKER_PASSWORD", directory: server.projectDir, capacity: 4 });
    }
  }
  const dbPath = join(dir, "tasks.db");
  const stack = await startStack({
    mock, env: { BENCH_WORKER_PASSWORD: PASSWORD },
    pluginOptions: { dbPath, pollIntervalMs: 500, maxConcurrentPerModel: withWorkers ? 4 : 12, maxConcurrentTotal: 100, workers: configs },
  });
  servers.local = stack.server;
  const peak: Record<string, number> = {};
  const sampler = setInterval(() => { for (const [name, s] of Object.entries(servers)) peak[name] = Math.max(peak[name] ?? 0, rssMb(s.pid)); }, 200);
  try {
    if (withWorkers) await waitUntil(async () => queryDb(dbPath, "SELECT count(*) AS n FROM worker_health WHERE state = 'healthy'")[0].n === 2, { timeoutMs: 20_000, what: "workers healthy" });
    const parent = await stack.newSession("bench");
    const seen = mock.requests().length;
    const started = Date.now();
    const lines = Array.from({ length: CHILDREN }, (_, i) => call("background_task", { description: `burn ${i}`, prompt: `CPU2S ${i}`, agent: "general", worker: withWorkers ? "auto" : "local" }));
    await stack.say(parent, lines.join("\n"));
    await waitUntil(async () => queryDb(dbPath, "SELECT count(*) AS n FROM tasks WHERE status = 'completed'")[0].n === CHILDREN, { timeoutMs: 600_000, intervalMs: 200, what: "all children completed" });
    const wallMs = Date.now() - started;
    const rows = queryDb(dbPath, "SELECT description, worker, settled_at FROM tasks");
    // When each child's last answer left the mock model: its request after the tool result.
    const answered = new Map<string, number>();
    for (const r of mock.requests().slice(seen)) {
      const job = /CPU2S (\d+)/.exec(JSON.stringify(r.body.messages.filter((m) => m.role === "user").slice(0, 2)))?.[1];
      if (job && r.body.messages.at(-1)?.role === "tool") answered.set(job, r.at);
    }
    const settleMs = { local: [] as number[], remote: [] as number[] };
    const placed: Record<string, number> = {};
    for (const row of rows) {
      const job = /burn (\d+)/.exec(row.description)![1]!;
      placed[row.worker ?? "local"] = (placed[row.worker ?? "local"] ?? 0) + 1;
      const at = answered.get(job);
      if (at !== undefined) (row.worker ? settleMs.remote : settleMs.local).push(row.settled_at - at);
    }
    return { label, wallMs, peakRssMb: peak, settleMs, placed };
  } finally {
    clearInterval(sampler);
    await stack.stop();
    for (const [name, s] of Object.entries(servers)) if (name !== "local") await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (xs: number[]) => (xs.length ? `p50 ${percentile(xs, 50)} ms, p99 ${percentile(xs, 99)} ms (n=${xs.length})` : "-");

export async function runWorkersBench(): Promise<Run[]> {
  const mock = await startMockModel({ responder });
  try {
    const alone = await runOnce(mock, "local alone (12 slots)", false);
    const spread = await runOnce(mock, "local 4 + 2 workers x 4", true);
    console.log(`\nworkers: ${CHILDREN} children, each one bash call burning a CPU for 2 s (all servers on this ${process.env.BENCH_CORES ?? "2-core"} machine)`);
    for (const r of [alone, spread]) {
      console.log(`  ${r.label}: wall ${(r.wallMs / 1000).toFixed(1)} s; placed ${JSON.stringify(r.placed)}; peak RSS ${Object.entries(r.peakRssMb).map(([n, mb]) => `${n} ${mb.toFixed(0)} MB`).join(", ")}`);
      console.log(`    answer -> task settled: local ${fmt(r.settleMs.local)}; remote ${fmt(r.settleMs.remote)}`);
    }
    const local = [...alone.settleMs.local, ...spread.settleMs.local];
    const remote = spread.settleMs.remote;
    if (remote.length) console.log(`  remote vs local settle latency: p50 ${percentile(remote, 50) - percentile(local, 50)} ms, p99 ${percentile(remote, 99) - percentile(local, 99)} ms (goal: within 50 ms); wall ratio ${(spread.wallMs / alone.wallMs).toFixed(2)} (with workers / alone)`);
    return [alone, spread];
  } finally {
    await mock.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runWorkersBench();

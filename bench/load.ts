/**
 * Load on the real host: 200 tasks launched through the plugin, against the same 200 child
 * sessions created and prompted directly by a client on a server without the plugin (wall time
 * and the server's peak RSS); and the calls the plugin makes to the host per second while tasks
 * wait, at 50 and at 200 tasks, which must not grow with the number of tasks.
 * Run alone with `npx tsx bench/load.ts [tasks]`, or through `npm run bench -- load`.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { startMockModel, type MockModel } from "../test/harness/mock-model.ts";
import { startOpencode, type OpencodeServer } from "../test/harness/opencode-server.ts";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, type Stack } from "../test/harness/plugin-stack.ts";

type Run = { label: string; wallMs: number; peakRssMB: number };
type Rate = { tasks: number; callsPerSecond: number };
// All in one parent message: a user prompt sent while a notification's turn runs would join it.
const BATCH = 1000;

export async function runLoadBench({ tasks = 200, print = true } = {}) {
  const mock = await startMockModel();
  try {
    const runs = [
      await directRun(mock, tasks),
      await pluginRun(mock, tasks, "plugin, limits raised to the task count", { maxConcurrentPerModel: tasks, maxConcurrentTotal: tasks }),
      await pluginRun(mock, tasks, "plugin, default limits (5 per model)", {}),
    ];
    const rates = [await waitingRate(mock, 50), await waitingRate(mock, tasks)];
    if (print) report(runs, rates);
    return { runs, rates };
  } finally {
    await mock.close();
  }
}

/** Baseline: no plugin; the client creates and prompts every child itself and polls until all are done. */
async function directRun(mock: MockModel, tasks: number): Promise<Run> {
  const server = await startOpencode({ model: mock.url });
  try {
    const client = server.client;
    const parent = (await client.session.create({ body: { title: "load: direct" } })).data!.id;
    const started = Date.now();
    const children: string[] = [];
    for (let i = 0; i < tasks; i++) {
      const child = (await client.session.create({ body: { parentID: parent, title: `direct ${i}` } })).data!.id;
      await client.session.promptAsync({ path: { id: child }, body: { agent: "general", model: MOCK_MODEL, parts: [{ type: "text", text: `REPLY direct ${i}` }] } });
      children.push(child);
    }
    await waitUntil(async () => {
      const busy = (await client.session.status()).data ?? {};
      return Object.keys(busy).length === 0 && (await allAnswered(server, children));
    }, { timeoutMs: 600_000, intervalMs: 500, what: "all direct children done" });
    return { label: "no plugin: client prompts children directly", wallMs: Date.now() - started, peakRssMB: peakRssMB(server.pid) };
  } finally {
    await server.stop();
  }
}

export async function allAnswered(server: OpencodeServer, children: string[]): Promise<boolean> {
  for (const id of children) {
    const messages = (await server.client.session.messages({ path: { id }, query: { limit: 1 } })).data ?? [];
    if (messages.at(-1)?.info.role !== "assistant") return false;
  }
  return true;
}

async function pluginRun(mock: MockModel, tasks: number, label: string, options: Record<string, unknown>): Promise<Run> {
  const stack = await startStack({ mock, pluginOptions: options });
  try {
    const parent = await stack.newSession("load: plugin");
    const started = Date.now();
    await launch(stack, parent, tasks, (i) => `REPLY plugin ${i}`);
    await waitUntil(async () => (await stack.notifications(parent)).join("\n").split("<background-task-notification").length - 1 >= tasks, { timeoutMs: 900_000, intervalMs: 500, what: "all notifications" });
    return { label, wallMs: Date.now() - started, peakRssMB: peakRssMB(stack.server.pid) };
  } finally {
    await stack.stop();
  }
}

/** Launches `tasks` tasks, BATCH per parent message. */
export async function launch(stack: Stack, parent: string, tasks: number, prompt: (i: number) => string): Promise<void> {
  for (let first = 0; first < tasks; first += BATCH) {
    const lines = [];
    for (let i = first; i < Math.min(tasks, first + BATCH); i++) lines.push(call("background_task", { description: `load ${i}`, prompt: prompt(i), agent: "general" }));
    await stack.say(parent, lines.join("\n"));
  }
  const outputs = (await toolOutputs(stack, parent, "background_task")).join("\n");
  const launched = outputs.split("Launched background task").length - 1;
  if (launched !== tasks) throw new Error(`launched ${launched} of ${tasks} tasks: ${outputs.slice(0, 300)}`);
}

/** Host calls per second made by the plugin while `tasks` tasks wait (20 running slowly, the rest queued). */
async function waitingRate(mock: MockModel, tasks: number): Promise<Rate> {
  const stack = await startStack({
    mock,
    pluginOptions: { maxConcurrentPerModel: 20, maxConcurrentTotal: 20 },
    env: { OPENCODE_ERRANDS_STATS_MS: "1000" },
  });
  try {
    const parent = await stack.newSession("load: waiting");
    await launch(stack, parent, tasks, (i) => `SLOW 60000\nREPLY late ${i}`);
    await new Promise((r) => setTimeout(r, 2000));
    const before = await hostCalls(stack);
    const windowMs = 8000;
    await new Promise((r) => setTimeout(r, windowMs));
    const after = await hostCalls(stack);
    return { tasks, callsPerSecond: (after - before) / (windowMs / 1000) };
  } finally {
    await stack.stop();
  }
}

async function hostCalls(stack: Stack): Promise<number> {
  const lines = (await stack.server.logFile()).split("\n").filter((l) => l.includes("background tasks host calls"));
  return Number(lines.at(-1)?.match(/total=(\d+)/)?.[1] ?? 0);
}

function peakRssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(status.match(/VmHWM:\s+(\d+) kB/)?.[1] ?? 0) / 1024;
}

function report(runs: Run[], rates: Rate[]): void {
  const base = runs[0];
  console.log(`\nLoad: ${runs.length} ways to run the same tasks on a real opencode serve (mock model answers at once)`);
  console.log("run                                              wall s   peak RSS MB   vs no plugin (time, RSS)");
  for (const run of runs) {
    console.log(`${run.label.padEnd(48)}${(run.wallMs / 1000).toFixed(1).padStart(7)}${run.peakRssMB.toFixed(0).padStart(14)}   ${(run.wallMs / base.wallMs).toFixed(2)}x, ${(run.peakRssMB / base.peakRssMB).toFixed(2)}x`);
  }
  console.log("\nHost calls by the plugin per second while tasks wait (20 running slowly, the rest queued):");
  for (const rate of rates) console.log(`  ${String(rate.tasks).padStart(4)} tasks: ${rate.callsPerSecond.toFixed(2)} calls/s`);
  const growth = rates[1].callsPerSecond / Math.max(0.01, rates[0].callsPerSecond);
  console.log(`  ${rates[1].tasks} vs ${rates[0].tasks} tasks: ${growth.toFixed(2)}x (goal: does not grow with the task count: ${growth <= 1.5 ? "met" : "NOT met"})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runLoadBench({ tasks: Number(process.argv[2] ?? 200) }).then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

/**
 * Memory on the real host: VmRSS of `opencode serve` idle without a plugin, with a one-tool plugin
 * (test/fixtures/one-tool-plugin: what any plugin built on @opencode-ai/plugin's `tool()` costs,
 * the floor for a plugin with tools), and with this plugin; several rounds of one start each, the order
 * rotated every round so that drift on the machine falls on all three alike; medians, with the
 * spread. Then after 200 tasks: launched through the plugin, against the same 200 children
 * prompted directly on a server without it. Run it on a quiet machine: other processes' memory
 * pressure and CPU load show in the figures (a start varies by 2-3 MB, more on a busy machine).
 * Run alone with `npx tsx bench/rss.ts [rounds] [tasks]`, or through `npm run bench -- rss`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startMockModel, type MockModel } from "../test/harness/mock-model.ts";
import { startOpencode, type OpencodeServer } from "../test/harness/opencode-server.ts";
import { subscribeEvents } from "../test/harness/events.ts";
import { startStack, waitUntil, MOCK_MODEL, PACKAGE_DIR } from "../test/harness/plugin-stack.ts";
import { allAnswered, launch } from "./load.ts";
import { median } from "./stats.ts";

// Idle is the absence of work, so there is no event to wait for: startup work and the collector
// get this long after the last request before RSS is read.
const SETTLE_MS = 5_000;
const SAMPLES = 5;
const SAMPLE_EVERY_MS = 500;
/** Goal: idle, this plugin costs at most this much more than the one-tool plugin. */
const GOAL_ABOVE_ONE_TOOL_MB = 2;
const DEFAULT_ROUNDS = 7;

type PluginUnderTest = { dir: string; tool: string };
const THIS_PLUGIN: PluginUnderTest = { dir: PACKAGE_DIR, tool: "background_task" };
const ONE_TOOL_PLUGIN: PluginUnderTest = { dir: join(PACKAGE_DIR, "test/fixtures/one-tool-plugin"), tool: "greet" };

export type RssBenchResult = {
  idleWithout: number[];
  idleOneTool: number[];
  idleWith: number[];
  afterDirect: number;
  afterPlugin: number;
  tasks: number;
};

export async function runRssBench({ rounds = DEFAULT_ROUNDS, tasks = 200, print = true } = {}): Promise<RssBenchResult> {
  const mock = await startMockModel();
  try {
    const idle = { without: [] as number[], oneTool: [] as number[], with: [] as number[] };
    const cases = [
      { into: idle.without, plugin: undefined },
      { into: idle.oneTool, plugin: ONE_TOOL_PLUGIN },
      { into: idle.with, plugin: THIS_PLUGIN },
    ];
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < cases.length; i++) {
        const { into, plugin } = cases[(round + i) % cases.length]!;
        into.push(await idleRss(mock, plugin));
      }
    }
    const [afterDirectMB, afterPluginMB] = tasks > 0 ? [await afterDirect(mock, tasks), await afterPlugin(mock, tasks)] : [Number.NaN, Number.NaN];
    const result = { idleWithout: idle.without, idleOneTool: idle.oneTool, idleWith: idle.with, afterDirect: afterDirectMB, afterPlugin: afterPluginMB, tasks };
    if (print) report(result);
    return result;
  } finally {
    await mock.close();
  }
}

/** A server booted by the same requests in every case (event stream, tool ids, one session), then left alone. */
async function idleRss(mock: MockModel, plugin: PluginUnderTest | undefined): Promise<number> {
  const server = await startOpencode({ model: mock.url, ...(plugin ? { pluginDir: plugin.dir, pluginOptions: {} } : {}) });
  const events = await subscribeEvents(server.client, 30_000).catch(async (error) => {
    await server.stop();
    throw error;
  });
  try {
    const tools = (await server.client.tool.ids()).data ?? [];
    if (plugin && !tools.includes(plugin.tool)) throw new Error(`the plugin in ${plugin.dir} did not load: tools ${tools.join(", ")}`);
    await server.client.session.create({ body: { title: "rss: idle" } });
    return await settledRssMB(server);
  } finally {
    events.close();
    await server.stop();
  }
}

async function afterDirect(mock: MockModel, tasks: number): Promise<number> {
  const server = await startOpencode({ model: mock.url });
  try {
    const client = server.client;
    const parent = (await client.session.create({ body: { title: "rss: direct" } })).data!.id;
    const children: string[] = [];
    for (let i = 0; i < tasks; i++) {
      const child = (await client.session.create({ body: { parentID: parent, title: `direct ${i}` } })).data!.id;
      await client.session.promptAsync({ path: { id: child }, body: { agent: "general", model: MOCK_MODEL, parts: [{ type: "text", text: `REPLY direct ${i}` }] } });
      children.push(child);
    }
    await waitUntil(async () => Object.keys((await client.session.status()).data ?? {}).length === 0 && (await allAnswered(server, children)), {
      timeoutMs: 600_000, intervalMs: 500, what: "all direct children done",
    });
    return await settledRssMB(server);
  } finally {
    await server.stop();
  }
}

async function afterPlugin(mock: MockModel, tasks: number): Promise<number> {
  const stack = await startStack({ mock, pluginOptions: { maxConcurrentPerModel: tasks, maxConcurrentTotal: tasks } });
  try {
    const parent = await stack.newSession("rss: plugin");
    await launch(stack, parent, tasks, (i) => `REPLY plugin ${i}`);
    await waitUntil(async () => (await stack.notifications(parent)).join("\n").split("<background-task-notification").length - 1 >= tasks, {
      timeoutMs: 900_000, intervalMs: 500, what: "all notifications",
    });
    return await settledRssMB(stack.server);
  } finally {
    await stack.stop();
  }
}

/** The median of several VmRSS readings taken once the server has been left alone for SETTLE_MS. */
async function settledRssMB(server: OpencodeServer): Promise<number> {
  await sleep(SETTLE_MS);
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    if (i > 0) await sleep(SAMPLE_EVERY_MS);
    samples.push(rssMB(server.pid));
  }
  return median(samples);
}

function rssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(status.match(/VmRSS:\s+(\d+) kB/)?.[1] ?? Number.NaN) / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function report(r: RssBenchResult): void {
  const mb = (n: number) => `${n.toFixed(0)} MB`;
  const signed = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(1)} MB`;
  const spread = (xs: number[]) => `${xs.length} start${xs.length === 1 ? "" : "s"}, ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} MB`;
  const without = median(r.idleWithout);
  const oneTool = median(r.idleOneTool);
  const withPlugin = median(r.idleWith);
  const aboveOneTool = withPlugin - oneTool;
  // Two starts of the same round ran minutes apart at most: their difference leaves out slow drift.
  const paired = r.idleWith.map((v, i) => v - r.idleOneTool[i]!);
  console.log(`\nRSS of opencode serve, idle (VmRSS; median of ${SAMPLES} readings ${SETTLE_MS / 1000} s after the last request; median of the starts)`);
  console.log(`${"idle, no plugin".padEnd(44)}${mb(without).padStart(8)}   (${spread(r.idleWithout)})`);
  console.log(`${"idle, a one-tool plugin (one-tool-plugin)".padEnd(44)}${mb(oneTool).padStart(8)}   ${signed(oneTool - without)} vs no plugin (${spread(r.idleOneTool)})`);
  console.log(`${"idle, with this plugin".padEnd(44)}${mb(withPlugin).padStart(8)}   ${signed(withPlugin - without)} vs no plugin (${spread(r.idleWith)})`);
  console.log(`${"this plugin minus the one-tool plugin".padEnd(44)}${signed(aboveOneTool).padStart(8)}   ` +
    `(round by round: median ${signed(median(paired))}, ${paired.map((d) => d.toFixed(0)).join(", ")})`);
  console.log(`Goal: idle, within ${GOAL_ABOVE_ONE_TOOL_MB} MB of the one-tool plugin: ${aboveOneTool <= GOAL_ABOVE_ONE_TOOL_MB ? "met" : "NOT MET"} (${signed(aboveOneTool)})`);
  if (r.tasks <= 0) return;
  console.log(`${`after ${r.tasks} children prompted directly, no plugin`.padEnd(44)}${mb(r.afterDirect).padStart(8)}`);
  console.log(`${`after ${r.tasks} tasks through the plugin`.padEnd(44)}${mb(r.afterPlugin).padStart(8)}   ${signed(r.afterPlugin - r.afterDirect)}, ${(r.afterPlugin / r.afterDirect).toFixed(2)}x`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRssBench({ rounds: Number(process.argv[2] ?? DEFAULT_ROUNDS), tasks: Number(process.argv[3] ?? 200) }).then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

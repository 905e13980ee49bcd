/**
 * Memory on the real host: VmRSS of `opencode serve` idle without a plugin, with a one-tool plugin
 * (test/fixtures/hello-plugin: what any plugin built on @opencode-ai/plugin's `tool()` costs), and
 * with this plugin (several starts each, interleaved); and after 200 tasks: launched through the
 * plugin, against the same 200 children prompted directly on a server without it. Run it on a quiet
 * machine: other processes' memory pressure shows in the figures.
 * Run alone with `npx tsx bench/rss.ts [starts] [tasks]`, or through `npm run bench -- rss`.
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
const GOAL_IDLE_MB = 10;

type PluginUnderTest = { dir: string; tool: string };
const THIS_PLUGIN: PluginUnderTest = { dir: PACKAGE_DIR, tool: "background_task" };
const ONE_TOOL_PLUGIN: PluginUnderTest = { dir: join(PACKAGE_DIR, "test/fixtures/hello-plugin"), tool: "hello" };

export type RssBenchResult = {
  idleWithout: number[];
  idleOneTool: number[];
  idleWith: number[];
  afterDirect: number;
  afterPlugin: number;
  tasks: number;
};

export async function runRssBench({ starts = 3, tasks = 200, print = true } = {}): Promise<RssBenchResult> {
  const mock = await startMockModel();
  try {
    const idleWithout: number[] = [];
    const idleOneTool: number[] = [];
    const idleWith: number[] = [];
    for (let i = 0; i < starts; i++) {
      idleWithout.push(await idleRss(mock, undefined));
      idleOneTool.push(await idleRss(mock, ONE_TOOL_PLUGIN));
      idleWith.push(await idleRss(mock, THIS_PLUGIN));
    }
    const [afterDirectMB, afterPluginMB] = [await afterDirect(mock, tasks), await afterPlugin(mock, tasks)];
    const result = { idleWithout, idleOneTool, idleWith, afterDirect: afterDirectMB, afterPlugin: afterPluginMB, tasks };
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
  const without = median(r.idleWithout);
  const oneTool = median(r.idleOneTool);
  const withPlugin = median(r.idleWith);
  const added = withPlugin - without;
  const line = (label: string, value: number, base: number, detail = "") =>
    console.log(`${label.padEnd(44)}${mb(value).padStart(8)}   ${(value - base >= 0 ? "+" : "") + mb(value - base)}, ${(value / base).toFixed(2)}x${detail}`);
  console.log(`\nRSS of opencode serve (VmRSS; median of ${SAMPLES} readings ${SETTLE_MS / 1000} s after the last request)`);
  console.log(`${"".padEnd(44)}${"RSS".padStart(8)}   vs its baseline`);
  console.log(`${"idle, no plugin".padEnd(44)}${mb(without).padStart(8)}   (starts: ${r.idleWithout.map(mb).join(", ")})`);
  line("idle, a one-tool plugin (hello-plugin)", oneTool, without, `   (starts: ${r.idleOneTool.map(mb).join(", ")})`);
  line("idle, with this plugin", withPlugin, without, `   (starts: ${r.idleWith.map(mb).join(", ")})`);
  console.log(`${`after ${r.tasks} children prompted directly, no plugin`.padEnd(44)}${mb(r.afterDirect).padStart(8)}`);
  line(`after ${r.tasks} tasks through the plugin`, r.afterPlugin, r.afterDirect);
  console.log(`Goal: the plugin adds less than ${GOAL_IDLE_MB} MB to an idle OpenCode: ${added < GOAL_IDLE_MB ? "met" : "NOT MET"} (${added >= 0 ? "+" : ""}${mb(added)}; ` +
    `a plugin with one tool() already adds ${mb(oneTool - without)}, ${mb(withPlugin - oneTool)} of it is this plugin's own)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRssBench({ starts: Number(process.argv[2] ?? 3), tasks: Number(process.argv[3] ?? 200) }).then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

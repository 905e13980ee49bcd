/**
 * The spend accounting on the real host (issue 25): the same fan-out as bench/cost.ts part 2, on
 * `opencode serve` with the mock model (priced, so OpenCode computes a cost), with accounting on
 * against off. Off is the plugin built without its recorder (OPENCODE_ERRANDS_BENCH_NO_SPEND, read
 * only for this bench; not an option). Each child makes three model requests (two bash calls,
 * then its answer), each reporting 4,000 input and 1,000 output tokens. A round: one server, one
 * parent message launching every child, until the parent has been told of all of them; rounds
 * alternate off and on (ABBA), and the ratio is the median of the pairs' ratios.
 * Run with `npx tsx bench/cost-real-host.ts [children=50] [pairs=4]` (through /tmp/realhost.lock
 * on a shared machine); it takes about a minute per pair.
 */
import { pathToFileURL } from "node:url";
import { startMockModel, defaultResponder, messageText, type MockReply, type MockRequest } from "../test/harness/mock-model.ts";
import { startStack, waitUntil } from "../test/harness/plugin-stack.ts";
import { launch } from "./load.ts";
import { median, percentile } from "./stats.ts";

const REQUESTS = 3;
const PRICE = { input: 3, output: 15 };

/** Every child's prompt is `STEPS 3`: two bash calls, then its answer; every answer reports its usage. */
function responder(req: MockRequest): MockReply {
  if (req.isTitle) return defaultResponder(req);
  const first = req.body.messages.find((m) => m.role === "user");
  if (!first || !/^STEPS \d+$/m.test(messageText(first))) return { ...defaultResponder(req), usage: { input: 4000, output: 1000 } };
  const done = req.body.messages.filter((m) => m.role === "assistant" && m.tool_calls?.length).length;
  const reply: MockReply = done < REQUESTS - 1 ? { toolCalls: [{ name: "bash", args: { command: `echo step ${done + 1}`, description: "a step" } }] } : { text: "done" };
  return { ...reply, usage: { input: 4000, output: 1000 } };
}

export async function runCostRealHostBench(children = 50, pairs = 4) {
  const mock = await startMockModel({ responder });
  const on: number[] = [], off: number[] = [];
  try {
    await round(mock, children, true); // warm-up: the binary's files in the page cache
    for (let p = 0; p < pairs; p++) {
      for (const accounting of p % 2 === 0 ? [false, true] : [true, false]) (accounting ? on : off).push(await round(mock, children, accounting));
    }
  } finally {
    await mock.close();
  }
  const ratios = on.map((ms, i) => ms / off[i]!);
  const result = { children, pairs, onMs: on, offMs: off, ratio: median(ratios), ratios };
  console.log(`\nSpend accounting on the real host (opencode serve, mock model), ${children} children x ${REQUESTS} requests, ${pairs} pairs:`);
  console.log(`  accounting on:  ${median(on).toFixed(0)} ms median (${on.map((x) => x.toFixed(0)).join(", ")})`);
  console.log(`  accounting off: ${median(off).toFixed(0)} ms median (${off.map((x) => x.toFixed(0)).join(", ")})`);
  console.log(`  on/off, median of the pairs: ${result.ratio.toFixed(3)} (pairs ${ratios.map((r) => r.toFixed(3)).join(", ")}; range ${percentile(ratios, 0).toFixed(3)}-${percentile(ratios, 100).toFixed(3)}) (goal: within 2%)`);
  return result;
}

async function round(mock: Awaited<ReturnType<typeof startMockModel>>, children: number, accounting: boolean): Promise<number> {
  const stack = await startStack({ mock, modelCost: PRICE, env: accounting ? {} : { OPENCODE_ERRANDS_BENCH_NO_SPEND: "1" } });
  try {
    const parent = await stack.newSession(`cost bench ${accounting ? "on" : "off"}`);
    const started = Date.now();
    await launch(stack, parent, children, () => `STEPS ${REQUESTS}`);
    await waitUntil(async () => (await stack.notifications(parent)).join("\n").split("<background-task-notification").length - 1 >= children,
      { timeoutMs: 600_000, intervalMs: 200, what: "every notification" });
    const ms = Date.now() - started;
    const spent = (await stack.notifications(parent)).join("\n").includes(", spent ");
    if (spent !== accounting) throw new Error(`accounting ${accounting ? "on" : "off"}, but the notices ${spent ? "show" : "do not show"} a spend`);
    return ms;
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runCostRealHostBench(Number(process.argv[2] ?? 50), Number(process.argv[3] ?? 4));
  process.exit(0);
}

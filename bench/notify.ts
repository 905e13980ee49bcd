/**
 * Notification latency on the real host: from the child's session.idle (as the event stream
 * delivers it) to the parent's notification being stored (its part arriving on the same stream).
 * Three modes in one run: idle events on (this plugin's default), and idle events off with polling
 * at 100 ms and at 3 s (how the best-known plugins detect completion).
 * Run alone with `npx tsx bench/notify.ts [tasks]`, or call runNotifyBench() from bench/run.ts.
 */
import { pathToFileURL } from "node:url";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, type Stack } from "../test/harness/plugin-stack.ts";
import { startMockModel } from "../test/harness/mock-model.ts";

type Mode = { label: string; options: Record<string, unknown>; pollMs?: number };

const MODES: Mode[] = [
  { label: "idle events (default)", options: {} },
  { label: "polling 100 ms, events off", options: { idleEvents: false, pollIntervalMs: 100 }, pollMs: 100 },
  { label: "polling 3 s, events off", options: { idleEvents: false, pollIntervalMs: 3000 }, pollMs: 3000 },
];

export type NotifyRow = { label: string; samples: number[]; p50: number; p95: number; max: number; pollMs?: number };

export async function runNotifyBench({ tasks = 20, print = true } = {}): Promise<NotifyRow[]> {
  const mock = await startMockModel();
  const rows: NotifyRow[] = [];
  try {
    for (const mode of MODES) rows.push(await measureMode(mode, tasks, mock));
  } finally {
    await mock.close();
  }
  if (print) report(rows, tasks);
  return rows;
}

async function measureMode(mode: Mode, tasks: number, mock: Awaited<ReturnType<typeof startMockModel>>): Promise<NotifyRow> {
  const stack = await startStack({ pluginOptions: mode.options, mock });
  try {
    const parent = await stack.newSession(`bench: ${mode.label}`);
    const samples: number[] = [];
    for (let i = 0; i < tasks; i++) samples.push(await oneTask(stack, parent, i));
    const sorted = [...samples].sort((a, b) => a - b);
    return { label: mode.label, samples, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted.at(-1)!, pollMs: mode.pollMs };
  } finally {
    await stack.stop();
  }
}

/** Launches one task whose child answers after 300 ms, and times idle -> notification stored. */
async function oneTask(stack: Stack, parent: string, i: number): Promise<number> {
  const arrivals = new Map<string, number>();
  const from = stack.events.events.length;
  await stack.say(parent, call("background_task", { description: `bench ${i}`, prompt: `SLOW 300\nREPLY bench result ${i}`, agent: "general" }));
  const id = taskIdsIn((await toolOutputs(stack, parent, "background_task")).at(-1)!)[0];
  const idle = await stack.events.waitForEvent((e) => e.type === "session.idle" && (e.properties as any).sessionID === id, 30_000, from);
  arrivals.set("idle", Date.now());
  void idle;
  await stack.events.waitForEvent((e) => {
    const part = (e.properties as any)?.part;
    return e.type === "message.part.updated" && part?.sessionID === parent && String(part.text ?? "").includes(`task_id="${id}"`);
  }, 30_000, from);
  const latency = Date.now() - arrivals.get("idle")!;
  // Let the turn the notification started finish, so the next launch finds the parent idle.
  await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { timeoutMs: 30_000 });
  return latency;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function report(rows: NotifyRow[], tasks: number): void {
  const base = rows[0];
  console.log(`\nNotification latency: child session.idle -> parent notification stored (${tasks} tasks per mode, real opencode serve)`);
  console.log("mode                          p50 ms   p95 ms   max ms   p50 vs events");
  for (const row of rows) {
    const ratio = row === base ? "1.0x" : `${(row.p50 / Math.max(1, base.p50)).toFixed(1)}x slower`;
    console.log(`${row.label.padEnd(30)}${fmt(row.p50)}${fmt(row.p95)}${fmt(row.max)}   ${ratio}`);
  }
  console.log(`goal: p50 with events under 50 ms: ${base.p50 < 50 ? "met" : "NOT met"} (${base.p50} ms)`);
  for (const row of rows.filter((r) => r.pollMs)) {
    const bound = row.pollMs! + 100;
    console.log(`goal: missed event settled within ${row.pollMs} ms + 100 ms (max): ${row.max <= bound ? "met" : "NOT met"} (max ${row.max} ms)`);
  }
}

const fmt = (n: number) => String(Math.round(n)).padStart(9);

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const tasks = Number(process.argv[2] ?? 20);
  runNotifyBench({ tasks }).then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}

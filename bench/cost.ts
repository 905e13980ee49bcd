/**
 * Spend accounting benchmark (issue 25).
 * 1. Per `message.updated` event as the plugin receives it: the raw event normalised and routed
 *    through the core to the spend recorder and the database (a SQLite file, as in the plugin),
 *    in the host's real mix (per request: the all-zero update, then the final numbers twice; see
 *    docs/host-notes.md). Baseline: the same events through a core without accounting. Goal: under
 *    20 µs p99 per event, and no call to OpenCode (every host call is counted).
 * 2. A 200-task fan-out on a fake host (launch, three model requests per child, answer, settle,
 *    notify, the spend rows written) with accounting on against off, in 60 alternating pairs
 *    (FAN_ROUNDS). Goal: within 2% wall time.
 * Run alone with `npx tsx bench/cost.ts` (Node, better-sqlite3) or `npx bun bench/cost.ts` (Bun,
 * bun:sqlite as inside OpenCode), or through `npm run bench -- cost` (both).
 */
import { mkdtempSync, rmSync } from "node:fs";
import v8 from "node:v8";
import vm from "node:vm";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FakeClock, flush } from "../test/helpers/fake-clock.ts";
import { FakeHost } from "../test/helpers/fake-host.ts";
import { TaskManager } from "../src/core/task-manager.ts";
import { DEFAULT_OPTIONS, type Options } from "../src/options/options.ts";
import { Store } from "../src/store/store.ts";
import { TaskSpend } from "../src/cost/task-spend.ts";
import { normalizeEvent } from "../src/host/normalize-event.ts";
import { buildTools } from "../src/tools/build-tools.ts";
import type { Task } from "../src/core/task.ts";
import { median, percentile } from "./stats.ts";

const TASKS = 100;
const REQUESTS = 10;
/** Requests whose rows one timed write takes (the plugin writes what 100 ms brought). */
const WINDOW = 20;
const ROUNDS = Number(process.env.EVENT_ROUNDS ?? 5);
const FAN_OUT = 200;
const FAN_OUT_REQUESTS = 3;
const FAN_OUT_ROUNDS = Number(process.env.FAN_ROUNDS ?? 60);
const METERED_ROUNDS = 3;
const PARENT = "ses_parent_bench";
const MODEL = { providerID: "mock", modelID: "mock-model" };

export type CostBenchResult = {
  runtime: string;
  perEvent: {
    events: number; on: Percentiles; off: Percentiles; writeEvents: Percentiles;
    /** The timed writes of the kept rows (WINDOW requests each), and the mean per event with them counted. */
    flushes: Percentiles; flushCount: number; amortisedUs: number; offMeanUs: number;
    hostCalls: number; rowsWritten: number;
  };
  fanOut: {
    tasks: number; accountingMs: number[]; share: number; onMs: number[]; offMs: number[]; onCpuMs: number[]; offCpuMs: number[]; ratio: number; cpuRatio: number;
    /** The spread of the pairs' wall ratios (quartiles) and a 95% interval of their median (bootstrap). */
    ratioQuartiles: [number, number]; ratioInterval: [number, number]; cpuInterval: [number, number];
  };
  goals: { under20usP99: boolean; noHostCall: boolean; fanOutWithin2Percent: boolean };
};
type Percentiles = { p50: number; p99: number };

export async function runCostBench({ print = true } = {}): Promise<CostBenchResult> {
  const root = mkdtempSync(join(tmpdir(), "ocbt-bench-cost-"));
  try {
    const perEvent = measurePerEvent(root);
    const fanOut = await measureFanOut(root);
    const result: CostBenchResult = {
      runtime: runtimeName(),
      perEvent,
      fanOut,
      goals: { under20usP99: perEvent.on.p99 < 20, noHostCall: perEvent.hostCalls === 0, fanOutWithin2Percent: fanOut.ratio <= 1.02 },
    };
    if (print) printResult(result);
    return result;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Per event

/** Rounds alternate on and off, each on a fresh database; the samples of all rounds are pooled. */
function measurePerEvent(root: string): CostBenchResult["perEvent"] {
  const events = messageEvents();
  eventRound(join(root, "warm.db"), events, true); // JIT and page cache warm-up, not counted
  const on: number[] = [], off: number[] = [], writes: number[] = [], flushes: number[] = [];
  let hostCalls = 0, rowsWritten = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const accounting of round % 2 === 0 ? [true, false] : [false, true]) {
      const run = eventRound(join(root, `events-${round}-${accounting}.db`), events, accounting);
      if (!accounting) { off.push(...run.samples); continue; }
      on.push(...run.samples);
      writes.push(...run.samples.filter((_, i) => i % 3 === 1)); // each request's first final update: the one written
      hostCalls += run.hostCalls;
      flushes.push(...run.flushes);
      rowsWritten += run.rows;
    }
  }
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const amortisedUs = ((total(on) + total(flushes)) / on.length) * 1000;
  return { events: on.length, on: micros(on), off: micros(off), writeEvents: micros(writes), flushes: micros(flushes), flushCount: flushes.length, amortisedUs, offMeanUs: (total(off) / off.length) * 1000, hostCalls, rowsWritten };
}

function eventRound(dbPath: string, events: unknown[], accounting: boolean): { samples: number[]; hostCalls: number; rows: number; flushes: number[] } {
  const clock = new FakeClock();
  const { host, calls } = countingHost(new FakeHost(clock));
  const store = Store.open({ path: dbPath, projectId: "bench" });
  const spend = accounting ? new TaskSpend(store.spend, store.tasks, (m, e) => { throw new Error(`${m}: ${String(e)}`); }) : undefined;
  const manager = new TaskManager(host, store.tasks, clock, DEFAULT_OPTIONS, { spend });
  for (let i = 0; i < TASKS; i++) {
    const task = runningTask(childId(i), clock.now());
    store.tasks.save(task);
    manager.life.progress.track(task.id, task.progress);
  }
  calls.count = 0;
  const samples = new Array<number>(events.length);
  const flushes: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const raw = events[i];
    const started = performance.now();
    const event = normalizeEvent(raw);
    if (event) manager.handleEvent(event);
    samples[i] = performance.now() - started;
    // The rows' timer writes what is kept, off the event path: here after every WINDOW requests.
    if (accounting && (i + 1) % (3 * WINDOW) === 0) flushes.push(timed(() => store.spend.flush()));
  }
  if (accounting) flushes.push(timed(() => store.spend.flush()));
  const hostCalls = calls.count;
  // Recording spend must not cost a call to OpenCode per event: the numbers come with the event.
  if (hostCalls !== 0) throw new Error(`${hostCalls} calls to OpenCode while handling message.updated events (accounting ${accounting ? "on" : "off"})`);
  const rows = accounting ? [...store.spend.ofTasks(Array.from({ length: TASKS }, (_, i) => childId(i))).values()].reduce((n, s) => n + s.requests, 0) : 0;
  if (accounting && rows !== TASKS * REQUESTS) throw new Error(`expected ${TASKS * REQUESTS} spend rows, found ${rows}`);
  manager.dispose();
  store.close();
  return { samples, hostCalls, rows, flushes };
}

function timed(fn: () => void): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

/** Per request, in the host's order: zeros, then the final numbers twice. Requests of different tasks interleave. */
function messageEvents(): unknown[] {
  const events: unknown[] = [];
  for (let r = 0; r < REQUESTS; r++) {
    for (let t = 0; t < TASKS; t++) {
      const id = `msg_${String(r).padStart(3, "0")}${String(t).padStart(4, "0")}bench`;
      const created = 1_700_000_000_000 + r * 10_000 + t;
      const tokens = { input: 3500 + t, output: 800 + r, reasoning: 200, cache: { read: 500 + r * 100, write: 0 } };
      events.push(assistantUpdate(childId(t), id, created, undefined));
      events.push(assistantUpdate(childId(t), id, created, { tokens, cost: 0.02565 + t / 1e6, completed: created + 900 }));
      events.push(assistantUpdate(childId(t), id, created, { tokens, cost: 0.02565 + t / 1e6, completed: created + 900 }));
    }
  }
  return events;
}

/** A v2 assistant `message.updated` as OpenCode 1.18.33 sends it; without `final`, its first update (all zeros, not completed). */
function assistantUpdate(sessionID: string, id: string, created: number, final: { tokens: object; cost: number; completed: number } | undefined): unknown {
  const zero = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } };
  return {
    type: "message.updated",
    properties: {
      sessionID,
      info: {
        id, sessionID, role: "assistant", parentID: `msg_user_${sessionID}`, modelID: MODEL.modelID, providerID: MODEL.providerID,
        mode: "general", agent: "general", path: { cwd: "/work/project", root: "/work/project" },
        time: final ? { created, completed: final.completed } : { created },
        cost: final?.cost ?? 0,
        tokens: final ? { total: 5000, ...final.tokens } : zero,
        ...(final ? { finish: "tool-calls" } : {}),
      },
    },
  };
}

function runningTask(id: string, now: number): Task {
  return {
    id, parentSessionID: PARENT, batchId: "msg_b", description: "bench", prompt: "p", agent: "general",
    model: MODEL, parentAgent: "build", status: "running", isForked: false, resumeCount: 0,
    progress: { toolCalls: 0, lastTools: [], lastActivityAt: now }, createdAt: now, promptedAt: now, startedAt: now,
  };
}

const childId = (i: number) => `ses_${String(i).padStart(6, "0")}childbench`;

/** The host with every call the core makes to OpenCode counted (listening for events is not a call). */
function countingHost(host: FakeHost): { host: FakeHost; calls: { count: number } } {
  const calls = { count: 0 };
  const proxy = new Proxy(host, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function" || prop === "onEvent" || prop === "emit") return value;
      return (...args: unknown[]) => {
        calls.count++;
        return value.apply(target, args);
      };
    },
  });
  return { host: proxy, calls };
}

// ---------------------------------------------------------------------------------------------
// 2. Fan-out

/**
 * Pairs of rounds, off and on in alternating order, each on a fresh database after a full garbage
 * collection, after a warm-up pair. Wall and CPU time of this process; the ratio is the median of
 * the pairs' ratios (a pair runs under the same load from whatever else shares the machine), with
 * the pairs' spread and a bootstrap interval of that median, so the noise can be read beside it.
 */
async function measureFanOut(root: string): Promise<CostBenchResult["fanOut"]> {
  for (const accounting of [false, true]) await fanOutRound(join(root, `fan-warm-${accounting}.db`), accounting);
  const on: Timing[] = [], off: Timing[] = [];
  for (let round = 0; round < FAN_OUT_ROUNDS; round++) {
    for (const accounting of round % 2 === 0 ? [false, true] : [true, false]) {
      const timing = await fanOutRound(join(root, `fan-${round}-${accounting}.db`), accounting);
      (accounting ? on : off).push(timing);
    }
  }
  // The meter's wrapping costs time of its own: the accounting's share comes from rounds of their own.
  const metered: Timing[] = [];
  for (let round = 0; round < METERED_ROUNDS; round++) metered.push(await fanOutRound(join(root, `fan-metered-${round}.db`), true, true));
  const ratios = on.map((t, i) => t.wallMs / off[i]!.wallMs);
  const cpuRatios = on.map((t, i) => t.cpuMs / off[i]!.cpuMs);
  const shares = metered.map((t) => t.accountingMs / t.wallMs);
  return {
    accountingMs: metered.map((t) => t.accountingMs), share: median(shares),
    tasks: FAN_OUT, onMs: on.map((t) => t.wallMs), offMs: off.map((t) => t.wallMs),
    onCpuMs: on.map((t) => t.cpuMs), offCpuMs: off.map((t) => t.cpuMs), ratio: median(ratios), cpuRatio: median(cpuRatios),
    ratioQuartiles: [percentile(ratios, 25), percentile(ratios, 75)], ratioInterval: medianInterval(ratios), cpuInterval: medianInterval(cpuRatios),
  };
}

/** A 95% interval of the median (2,000 resamples of the pairs, with a fixed seed): how far the noise may move it. */
function medianInterval(xs: number[]): [number, number] {
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const medians: number[] = [];
  for (let r = 0; r < 2000; r++) medians.push(median(xs.map(() => xs[Math.floor(random() * xs.length)]!)));
  return [percentile(medians, 2.5), percentile(medians, 97.5)];
}

/** A full collection before each round: the garbage of the round before is not collected (and paid for) inside this one. */
const collectGarbage: () => void = typeof Bun !== "undefined" ? () => Bun.gc(true) : exposedGc();

function exposedGc(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

type Timing = { wallMs: number; cpuMs: number; accountingMs: number };

/**
 * 200 tasks launched from one parent message through background_task, on the plugin's SQLite store
 * and the default limits (queued ones start as others settle). Each running child makes three
 * model requests (their message events in the host's mix), answers and goes idle; the round ends
 * when every task has settled and the parent has been told of all of them.
 */
async function fanOutRound(dbPath: string, accounting: boolean, metered = false): Promise<Timing> {
  const clock = new FakeClock();
  const host = new FakeHost(clock);
  host.addSession(PARENT, "idle");
  const store = Store.open({ path: dbPath, projectId: "bench" });
  const options: Options = { ...DEFAULT_OPTIONS };
  const meter = metered ? new Meter() : undefined;
  const rows = meter ? meter.wrapRows(store.spend) : store.spend;
  const recorder = accounting ? new TaskSpend(rows, store.tasks, (m, e) => { throw new Error(`${m}: ${String(e)}`); }) : undefined;
  const spend = recorder && meter ? meter.wrap(recorder) : recorder;
  const manager = new TaskManager(host, store.tasks, clock, options, { spend });
  host.onEvent((event) => manager.handleEvent(event));
  const tools = buildTools({ manager, clock, options, onCrash: (m) => { throw new Error(m); }, spend });
  const context = { sessionID: PARENT, messageID: "msg_parent_fan", agent: "build", abort: new AbortController().signal, extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } } };
  collectGarbage();
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < FAN_OUT; i++) {
    const out = String(await tools.background_task.execute({ description: `part ${i}`, prompt: `look at part ${i}`, agent: "general" } as never, context as never));
    if (!/task_id: /.test(out)) throw new Error(`launch failed: ${out}`);
  }
  const answered = new Set<string>();
  let request = 0;
  while (answered.size < FAN_OUT) {
    await flush();
    const busy = [...host.sessions.values()].filter((s) => s.id !== PARENT && s.activity === "busy" && !answered.has(s.id));
    if (busy.length === 0) throw new Error(`stuck: ${answered.size} of ${FAN_OUT} answered`);
    for (const session of busy) {
      for (let r = 0; r < FAN_OUT_REQUESTS; r++) {
        const id = `msg_fan${String(++request).padStart(7, "0")}`;
        const created = clock.now();
        const tokens = { input: 3500, output: 800, reasoning: 200, cache: { read: 500, write: 0 } };
        host.emit(normalizeEvent(assistantUpdate(session.id, id, created, undefined))!);
        for (let k = 0; k < 2; k++) host.emit(normalizeEvent(assistantUpdate(session.id, id, created, { tokens, cost: 0.02565, completed: created + 900 }))!);
      }
      answered.add(session.id);
      host.finishRun(session.id, `answer of ${session.id}`);
    }
  }
  await waitForNotifications(host, store, clock);
  rows.flush(); // the rows still kept are the accounting's work too (the store would write them within 100 ms)
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (accounting && (spend!.line(store.tasks.list({ parentSessionID: PARENT })[0]!.id) ?? "") === "") throw new Error("no spend recorded");
  manager.dispose();
  store.close();
  return { wallMs, cpuMs: (used.user + used.system) / 1000, accountingMs: meter?.ms ?? 0 };
}

/**
 * The time spent in the accounting itself: every call into the spend recorder (record, line,
 * budget checks) and the spend rows' timed writes. Measured inside each round, so the share of
 * the round's wall time does not depend on what else the machine runs.
 */
class Meter {
  ms = 0;
  private depth = 0;

  wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (obj, prop) => {
        const value = Reflect.get(obj, prop, obj);
        return typeof value === "function" ? (...args: unknown[]) => this.time(() => value.apply(obj, args)) : value;
      },
    });
  }

  /** The rows' flush runs from their own timer too: that time counts. */
  wrapRows(rows: Store["spend"]): Store["spend"] {
    const flush = rows.flush.bind(rows);
    rows.flush = () => this.time(flush);
    return rows;
  }

  private time<R>(fn: () => R): R {
    if (this.depth++ > 0) {
      try { return fn(); } finally { this.depth--; }
    }
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.ms += performance.now() - started;
      this.depth--;
    }
  }
}

async function waitForNotifications(host: FakeHost, store: Store, clock: FakeClock): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    await flush();
    const settled = store.tasks.list({ parentSessionID: PARENT }).filter((t) => t.status === "completed").length;
    if (settled === FAN_OUT && store.tasks.pendingNotifications(PARENT).length === 0) return;
    await clock.advance(1000);
  }
  throw new Error("the parent was not told of every task");
}

// ---------------------------------------------------------------------------------------------

function micros(samplesMs: number[]): Percentiles {
  return { p50: percentile(samplesMs, 50) * 1000, p99: percentile(samplesMs, 99) * 1000 };
}

function runtimeName(): string {
  return typeof Bun !== "undefined" ? `Bun ${Bun.version}, bun:sqlite` : `Node ${process.version}, better-sqlite3`;
}

function printResult(r: CostBenchResult): void {
  const e = r.perEvent, f = r.fanOut;
  const us = (p: Percentiles) => `p50 ${p.p50.toFixed(1)} µs / p99 ${p.p99.toFixed(1)} µs`;
  console.log(`\nSpend accounting (${r.runtime})`);
  console.log(`  message.updated, normalised + routed + recorded (${e.events} events, ${TASKS} tasks x ${REQUESTS} requests x 3 updates, ${ROUNDS} rounds):`);
  console.log(`    with accounting:    ${us(e.on)}   (goal: p99 < 20 µs) ${r.goals.under20usP99 ? "met" : "NOT MET"}`);
  console.log(`    without (baseline): ${us(e.off)}   (${(e.on.p99 / e.off.p99).toFixed(2)}x at p99)`);
  console.log(`    the update written (first final one per request): ${us(e.writeEvents)}`);
  console.log(`    the kept rows' timed write, ${WINDOW} requests each (${e.flushCount}), off the event path: ${us(e.flushes)}`);
  console.log(`    mean per event with those writes counted: ${e.amortisedUs.toFixed(1)} µs, against ${e.offMeanUs.toFixed(1)} µs without accounting`);
  console.log(`    calls to OpenCode while handling them: ${e.hostCalls} ${r.goals.noHostCall ? "(none, goal met)" : "(goal NOT MET)"}; rows written: ${e.rowsWritten}`);
  const ms = (xs: number[]) => `${median(xs).toFixed(0)} ms median (${xs.map((x) => x.toFixed(0)).join(", ")})`;
  console.log(`  ${f.tasks}-task fan-out, ${FAN_OUT_REQUESTS} requests per child, fake host, SQLite file, ${FAN_OUT_ROUNDS} pairs of rounds:`);
  console.log(`    accounting on:  wall ${ms(f.onMs)}; CPU ${median(f.onCpuMs).toFixed(0)} ms median`);
  console.log(`    accounting off: wall ${ms(f.offMs)}; CPU ${median(f.offCpuMs).toFixed(0)} ms median`);
  console.log(`    the accounting's own time (${METERED_ROUNDS} more on rounds, each call timed): ${median(f.accountingMs).toFixed(1)} ms median, ${(f.share * 100).toFixed(2)}% of their wall time (${(median(f.accountingMs) * 1000 / f.tasks).toFixed(0)} µs a task)`);
  const range = ([a, b]: [number, number]) => `${a.toFixed(3)}-${b.toFixed(3)}`;
  const sure = f.ratioInterval[1] <= 1.02 ? "" : f.ratioInterval[0] > 1.02 ? "" : " (the interval straddles 1.02: not certain)";
  console.log(`    a task costs the plugin ${(median(f.offMs) / f.tasks).toFixed(2)} ms without accounting (wall, median round / ${f.tasks})`);
  console.log(`    on/off, median of the pairs: wall ${f.ratio.toFixed(3)} (goal: within 2%) ${r.goals.fanOutWithin2Percent ? "met" : "NOT MET"}${sure}`);
  console.log(`      95% interval of that median ${range(f.ratioInterval)}; the pairs' quartiles ${range(f.ratioQuartiles)} (the noise of one pair)`);
  console.log(`      CPU of the process: ${f.cpuRatio.toFixed(3)} (95% interval ${range(f.cpuInterval)})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runCostBench();
  process.exit(0);
}

/**
 * The watch trigger's source on its own (no OpenCode, no database: what is measured is the watcher):
 * 1. Fire latency from a file write to the source's emit, debounce 1 s. Goal: p99 < debounce + 200 ms.
 * 2. 100 watch sources (started together) on a generated project of 10,000 tracked files with a node_modules of
 *    30,000 files: RSS and CPU over an idle window, against the same process before they start.
 * Run alone with `npx tsx bench/watch-source.ts` (or `npx bun bench/watch-source.ts` for Bun, as
 * inside OpenCode), or through bench/run.ts. BENCH_IDLE_SECONDS sets the idle windows (default 10),
 * BENCH_WATCH_SAMPLES the latency samples (default 30).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { systemClock } from "../src/core/clock.ts";
import type { RunningSource, SourceContext, TriggerEvent } from "../src/triggers/trigger-source.ts";
import { startWatchSource, type WatchSpec } from "../src/triggers/watch-source.ts";
import { percentile } from "./stats.ts";

const IDLE_MS = Number(process.env.BENCH_IDLE_SECONDS ?? 10) * 1000;
const SAMPLES = Number(process.env.BENCH_WATCH_SAMPLES ?? 30);
const SOURCES = Number(process.env.BENCH_WATCH_SOURCES ?? 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runWatchSourceBench(): Promise<void> {
  const runtime = typeof Bun !== "undefined" ? `Bun ${Bun.version}` : `Node ${process.version}`;
  console.log(`watch source (${runtime})`);
  const root = mkdtempSync(join(tmpdir(), "bench-watch-"));
  // Watchers and the clock's timers do not keep a process alive; inside OpenCode the server does.
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    await latency(join(root, "small"));
    await idleCost(join(root, "big"));
  } finally {
    clearInterval(keepAlive);
    rmSync(root, { recursive: true, force: true });
  }
}

function context(directory: string, emit: (event: TriggerEvent) => void): SourceContext {
  return {
    directory,
    emit,
    loadState: () => undefined,
    saveState: () => {},
    setNote: (note) => note && console.log(`  note: ${note}`),
    log: (level, message, extra) => level !== "debug" && console.log(`  ${level}: ${message} ${JSON.stringify(extra ?? {})}`),
    clock: systemClock,
    ownWrites: () => new Set(),
  };
}

const spec = (paths: string[], debounceMs: number): WatchSpec => ({ kind: "watch", paths, ignore: [], debounce: `${debounceMs}ms`, debounceMs });

async function latency(dir: string): Promise<void> {
  mkdirSync(join(dir, "src"), { recursive: true });
  gitRepo(dir);
  let fired: (() => void) | undefined;
  const source = await startWatchSource(spec(["src/"], 1000), context(dir, () => fired?.()));
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const emitted = new Promise<void>((resolve) => (fired = resolve));
    const start = performance.now();
    writeFileSync(join(dir, "src", `f${i % 5}.ts`), `save ${i}\n`);
    await emitted;
    samples.push(performance.now() - start);
  }
  await source.stop();
  const p = (q: number) => `${percentile(samples, q).toFixed(0)} ms`;
  console.log(`  fire latency, debounce 1000 ms, ${SAMPLES} saves: p50 ${p(50)}, p99 ${p(99)} (goal p99 < 1200 ms)`);
}

async function idleCost(dir: string): Promise<void> {
  const started = performance.now();
  generateProject(dir);
  console.log(`  generated 10,000 tracked files + 30,000 in node_modules in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const none = await idleWindow();
  const t0 = performance.now();
  let events = 0;
  // Started together, as a process starting up does: the project's shared watcher scans once.
  const sources: RunningSource[] = await Promise.all(
    Array.from({ length: SOURCES }, (_, i) => startWatchSource(spec(patternsFor(i), 1000), context(dir, () => events++))),
  );
  const startMs = performance.now() - t0;
  await sleep(1000);
  const watching = await idleWindow();
  for (const source of sources) await source.stop();
  console.log(`  ${SOURCES} sources started in ${(startMs / 1000).toFixed(1)} s (${(startMs / SOURCES).toFixed(0)} ms each); inotify watches held: ${inotifyWatches(watching)}`);
  for (const [name, w] of [["no source", none], [`${SOURCES} sources`, watching]] as const) {
    console.log(`  idle ${IDLE_MS / 1000} s, ${name}: CPU ${w.cpuMs.toFixed(0)} ms (${((100 * w.cpuMs) / IDLE_MS).toFixed(2)}% of a core), RSS ${w.rssMB.toFixed(0)} MB, heap ${w.heapMB.toFixed(0)} MB`);
  }
  console.log(`  cost of ${SOURCES} sources: +${(watching.rssMB - none.rssMB).toFixed(0)} MB RSS, +${(watching.cpuMs - none.cpuMs).toFixed(0)} ms CPU per ${IDLE_MS / 1000} s; events while idle: ${events}`);
}

/** Three kinds of trigger: a folder, a glob over the whole project (its filter must skip node_modules), two narrow globs. */
function patternsFor(i: number): string[] {
  return [["src/"], ["**/*.ts"], [`src/d${i % 100}/**/*.ts`, "docs/"]][i % 3]!;
}

async function idleWindow() {
  (globalThis as { gc?: () => void }).gc?.(); // node --expose-gc
  if (typeof Bun !== "undefined") Bun.gc(true);
  const cpu = process.cpuUsage();
  await sleep(IDLE_MS);
  const used = process.cpuUsage(cpu);
  const memory = process.memoryUsage();
  return { cpuMs: (used.user + used.system) / 1000, rssMB: memory.rss / 2 ** 20, heapMB: memory.heapUsed / 2 ** 20, watches: countInotifyWatches() };
}

function inotifyWatches(w: { watches: number | undefined }): string {
  return w.watches === undefined ? "unknown" : String(w.watches);
}

/** inotify watches this process holds (Linux only): one per watched folder or file. */
function countInotifyWatches(): number | undefined {
  let fds: string[];
  try {
    fds = readdirSync("/proc/self/fdinfo");
  } catch {
    return undefined;
  }
  let count = 0;
  for (const fd of fds) {
    try {
      count += readFileSync(`/proc/self/fdinfo/${fd}`, "utf8").split("\n").filter((line) => line.startsWith("inotify wd:")).length;
    } catch {
      // closed since the listing
    }
  }
  return count;
}

/** 100 folders of 100 sources, committed; a .gitignored dist/ and node_modules of 300 packages of 100 files. */
function generateProject(dir: string): void {
  for (let d = 0; d < 100; d++) {
    mkdirSync(join(dir, "src", `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, "src", `d${d}`, `f${f}.ts`), `export const v${f} = ${d};\n`);
  }
  for (let p = 0; p < 300; p++) {
    mkdirSync(join(dir, "node_modules", `pkg${p}`, "lib"), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, "node_modules", `pkg${p}`, "lib", `m${f}.js`), "module.exports = 1;\n");
  }
  mkdirSync(join(dir, "dist"));
  writeFileSync(join(dir, "dist", "out.js"), "\n");
  writeFileSync(join(dir, ".gitignore"), "node_modules/\ndist/\n");
  gitRepo(dir, true);
}

function gitRepo(dir: string, commit = false): void {
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@localhost", ...args], { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  if (commit) {
    git("add", "-A");
    git("commit", "-qm", "bench tree");
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runWatchSourceBench();

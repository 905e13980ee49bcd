/**
 * Fork context benchmark: time and heap growth of processForkContext on synthetic histories of
 * about 10k, 100k, 1M and 5M tokens, beside a naive baseline run on the same histories.
 * Run alone with `npx tsx bench/fork.ts`, or call runForkBench() from another script.
 */
import { pathToFileURL } from "node:url";
import { GCProfiler, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { DEFAULT_TOKEN_CAP, DEFAULT_TOOL_OUTPUT_LIMIT, processForkContext } from "../src/fork/process-fork-context.ts";
import type { ForkMessage } from "../src/fork/fork-types.ts";
import { countMessageTokens } from "../src/fork/message-tokens.ts";
import { truncateMessageOutputs } from "../src/fork/truncate-tool-output.ts";
import { generateHistory } from "../test/helpers/synthetic-history.ts";

export type Measure = { medianMs: number; bestMs: number; runs: number; peakHeapMB: number; allocatedMB: number };

export type ForkBenchRow = {
  label: string;
  messages: number;
  /** The whole history counted in full (by the naive run), before any cut. */
  historyTokens: number;
  ours: Measure;
  keptMessages: number;
  keptTokens: number;
  naive: Measure;
};

export type ForkBenchResult = {
  rows: ForkBenchRow[];
  /** The very first processForkContext call of the process (1M history), before JIT warm-up. */
  firstCallMs: number;
  ratios: { time5MOver1M: number; naiveOverOursAt1M: number };
  goals: { under200msAt1M: boolean; boundedByCap: boolean; tenTimesNaiveAt1M: boolean };
};

export type ForkBenchOptions = { runs?: number; naiveRuns?: number; print?: boolean };

const SIZES = [
  { label: "10k", tokens: 10_000 },
  { label: "100k", tokens: 100_000 },
  { label: "1M", tokens: 1_000_000 },
  { label: "5M", tokens: 5_000_000 },
];
const LIMITS = { tokenCap: DEFAULT_TOKEN_CAP, toolOutputLimit: DEFAULT_TOOL_OUTPUT_LIMIT };

/**
 * The naive way: count every message in full, drop the oldest until the rest fits, start at a user
 * message, then cut the outputs of what is left. Its work grows with the whole history.
 */
export function naiveForkContext(history: readonly ForkMessage[]): { messages: ForkMessage[]; historyTokens: number } {
  const counts = history.map((message) => countMessageTokens(message));
  const historyTokens = counts.reduce((sum, count) => sum + count, 0);
  let total = historyTokens;
  let start = 0;
  while (start < history.length && total > LIMITS.tokenCap) total -= counts[start++];
  while (start < history.length && history[start].info.role !== "user") start++;
  const messages = history.slice(start).map((message) => truncateMessageOutputs(message, LIMITS.toolOutputLimit).message);
  return { messages, historyTokens };
}

export function runForkBench(options: ForkBenchOptions = {}): ForkBenchResult {
  const runs = options.runs ?? 15;
  const naiveRuns = options.naiveRuns ?? 3;
  const firstHistory = generateHistory({ targetTokens: 1_000_000, seed: 42 });
  const firstCallMs = timeOnce(() => processForkContext(firstHistory, LIMITS));
  const rows = SIZES.map(({ label, tokens }) => benchSize(label, tokens, runs, naiveRuns));
  const row = (label: string) => rows.find((item) => item.label === label)!;
  const time5MOver1M = row("5M").ours.medianMs / row("1M").ours.medianMs;
  const naiveOverOursAt1M = row("1M").naive.medianMs / row("1M").ours.medianMs;
  const result: ForkBenchResult = {
    rows,
    firstCallMs,
    ratios: { time5MOver1M, naiveOverOursAt1M },
    goals: { under200msAt1M: row("1M").ours.medianMs < 200, boundedByCap: time5MOver1M <= 2, tenTimesNaiveAt1M: naiveOverOursAt1M >= 10 },
  };
  if (options.print ?? true) printResult(result, runs, naiveRuns);
  return result;
}

function benchSize(label: string, tokens: number, runs: number, naiveRuns: number): ForkBenchRow {
  const history = generateHistory({ targetTokens: tokens, seed: 42 });
  const ours = measure(() => processForkContext(history, LIMITS), runs, 5);
  const result = processForkContext(history, LIMITS);
  const { historyTokens } = naiveForkContext(history); // also the naive's warm-up run
  const naive = measure(() => naiveForkContext(history), naiveRuns, 0);
  return {
    label,
    messages: history.length,
    historyTokens,
    ours,
    keptMessages: result.stats.keptMessages,
    keptTokens: result.stats.tokens,
    naive,
  };
}

/** Warm-up runs, then the median of `runs` timed runs, each after a full GC; then one run for memory. */
function measure(run: () => unknown, runs: number, warmups: number): Measure {
  for (let i = 0; i < warmups; i++) run();
  const times = Array.from({ length: runs }, () => timeOnce(run));
  return { medianMs: median(times), bestMs: Math.min(...times), runs, ...memoryOf(run) };
}

function timeOnce(run: () => unknown): number {
  collectGarbage();
  const started = performance.now();
  run();
  return performance.now() - started;
}

/**
 * Memory of one run, from the GCs it caused: the peak is the most heap used at any point (before
 * each GC, and at the end) above the heap used before the run, garbage not yet collected included;
 * allocated is everything the run allocated (what each GC freed, plus the growth left at the end).
 */
function memoryOf(run: () => unknown): { peakHeapMB: number; allocatedMB: number } {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const profiler = new GCProfiler();
  profiler.start();
  const result = run();
  const atEnd = process.memoryUsage().heapUsed;
  const gcs = profiler.stop().statistics;
  void result; // kept alive until the end is measured
  const used = (stage: "beforeGC" | "afterGC", gc: (typeof gcs)[number]) => gc[stage].heapStatistics.usedHeapSize;
  const peak = Math.max(atEnd, ...gcs.map((gc) => used("beforeGC", gc)));
  const freed = gcs.reduce((sum, gc) => sum + used("beforeGC", gc) - used("afterGC", gc), 0);
  return { peakHeapMB: toMB(peak - before), allocatedMB: toMB(freed + atEnd - before) };
}

function toMB(bytes: number): number {
  return bytes / 1024 / 1024;
}

let gc: (() => void) | undefined;

function collectGarbage(): void {
  if (!gc) {
    // Lets the bench run under plain `tsx` without --expose-gc.
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function printResult(result: ForkBenchResult, runs: number, naiveRuns: number): void {
  const { tokenCap, toolOutputLimit } = LIMITS;
  console.log(`\nFork context: cap ${tokenCap} tokens, tool outputs cut at ${toolOutputLimit} characters.`);
  console.log(`Time: median of ${runs} runs (ours, after 5 warm-up runs) and ${naiveRuns} runs (naive, after 1), each after a full GC.`);
  console.log("Memory of one run, from its GCs: peak = most heap used above the start (uncollected garbage included),");
  console.log("alloc = all it allocated.");
  console.log("Naive: count every message in full (untruncated), drop the oldest until the rest fits, then cut outputs;");
  console.log("it is run at every size, 5M included (about a second a run).\n");
  const header = ["history", "messages", "tokens", "ours ms", "peak MB", "alloc MB", "kept msgs", "kept tokens", "naive ms", "peak MB", "alloc MB", "naive/ours"];
  const lines = result.rows.map((row) => [
    row.label,
    String(row.messages),
    String(row.historyTokens),
    row.ours.medianMs.toFixed(1),
    row.ours.peakHeapMB.toFixed(1),
    row.ours.allocatedMB.toFixed(1),
    String(row.keptMessages),
    String(row.keptTokens),
    row.naive.medianMs.toFixed(1),
    row.naive.peakHeapMB.toFixed(1),
    row.naive.allocatedMB.toFixed(1),
    (row.naive.medianMs / row.ours.medianMs).toFixed(1) + "x",
  ]);
  printTable([header, ...lines]);
  const { ratios, goals } = result;
  const oneM = result.rows.find((row) => row.label === "1M")!;
  console.log(`\nFirst call in the process (1M history, cold JIT): ${result.firstCallMs.toFixed(1)} ms`);
  console.log(
    `Both count with the same tokenizer: at 1M the naive tokenizes ${oneM.historyTokens} tokens, ours the ${oneM.keptTokens} it keeps,` +
      ` so at equal speed per token the ratio cannot pass ${(oneM.historyTokens / oneM.keptTokens).toFixed(1)}x.`,
  );
  const best = (oneM.naive.bestMs / oneM.ours.bestMs).toFixed(1);
  console.log(`Best runs at 1M (less disturbed by other load on the machine): ours ${oneM.ours.bestMs.toFixed(1)} ms, naive ${oneM.naive.bestMs.toFixed(1)} ms, ${best}x.`);
  console.log(`Goal: 1M in under 200 ms .................. ${verdict(goals.under200msAt1M)} (${oneM.ours.medianMs.toFixed(1)} ms)`);
  console.log(`Goal: 5M no more than 2x the 1M time ....... ${verdict(goals.boundedByCap)} (5M/1M = ${ratios.time5MOver1M.toFixed(2)})`);
  console.log(`Goal: at least 10x faster than naive at 1M . ${verdict(goals.tenTimesNaiveAt1M)} (naive/ours = ${ratios.naiveOverOursAt1M.toFixed(1)}x)`);
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join("  "));
}

function verdict(met: boolean): string {
  return met ? "met" : "NOT MET";
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) runForkBench();

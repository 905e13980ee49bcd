/**
 * `npm run bench -- chaos` (issue 34): several real `opencode serve` processes on one data folder
 * and one database, random SIGKILL and restart, background tasks (children that succeed, fail
 * with a 400, and hit 500s that OpenCode retries) and interval automations; prints lost, doubled,
 * stuck and wrong outcomes (bench/chaos-check.ts). Options by environment:
 * BENCH_CHAOS_PROCESSES (3), BENCH_CHAOS_MINUTES (30), BENCH_CHAOS_TASKS (1000),
 * BENCH_CHAOS_AUTOMATIONS (50), BENCH_CHAOS_SEED (1), BENCH_CHAOS_KILL_EVERY_S (45),
 * BENCH_CHAOS_AUTOMATION_EVERY_S (60), BENCH_CHAOS_LEASE_MS (10000; 0 = the plugin's own),
 * BENCH_CHAOS_DRAIN_S (180), BENCH_CHAOS_PLUGIN_DIR (this checkout; a snapshot of a commit keeps
 * other edits out of a long run). It holds the machine: run it with nice, under the real-host lock.
 * Exits 1 when any invariant broke.
 */
import { pathToFileURL } from "node:url";
import { runChaos, type ChaosOptions } from "./chaos-run.ts";
import { formatVerdict, isClean } from "./chaos-check.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export function chaosOptionsFromEnv(): ChaosOptions {
  const lease = env("BENCH_CHAOS_LEASE_MS", 10_000);
  return {
    processes: env("BENCH_CHAOS_PROCESSES", 3),
    durationMs: env("BENCH_CHAOS_MINUTES", 30) * 60_000,
    tasks: env("BENCH_CHAOS_TASKS", 1000),
    automations: env("BENCH_CHAOS_AUTOMATIONS", 50),
    seed: env("BENCH_CHAOS_SEED", 1),
    killEveryMs: env("BENCH_CHAOS_KILL_EVERY_S", 45) * 1000,
    automationEverySec: env("BENCH_CHAOS_AUTOMATION_EVERY_S", 60),
    leaseMs: lease > 0 ? lease : undefined,
    drainMs: env("BENCH_CHAOS_DRAIN_S", 180) * 1000,
    pluginDir: process.env.BENCH_CHAOS_PLUGIN_DIR || undefined,
    log: (line) => console.log(line),
  };
}

export async function runChaosBench(options = chaosOptionsFromEnv()): Promise<boolean> {
  const { pluginDir, log, ...shown } = options;
  console.log(`chaos: ${JSON.stringify(shown)}${pluginDir ? ` plugin ${pluginDir}` : ""}`);
  const result = await runChaos(options);
  console.log(`\n${result.kills} SIGKILLs, ${result.launchFailures} launches cut by a kill, wall ${(result.wallMs / 60_000).toFixed(1)} min`);
  console.log(formatVerdict(result.verdict, 40));
  const clean = isClean(result.verdict);
  console.log(clean ? "chaos: every invariant held" : "chaos: INVARIANTS BROKEN");
  return clean;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exit((await runChaosBench()) ? 0 : 1);
}

/**
 * Runs the benchmarks and prints each one's figures beside the baseline it measures in the same
 * run. `npm run bench` runs all but the two soaks; `npm run bench -- notify|fork|store|load|evidence|rss|shared-db|dashboard|automations|triggers|channels|steps|workers|worktrees|cost|steady|chaos` runs the ones named.
 * The store and shared-db run twice: under Node (better-sqlite3, as the CLI) and under Bun
 * (bun:sqlite, as inside OpenCode).
 */
import { spawnSync } from "node:child_process";
import { runNotifyBench } from "./notify.ts";
import { runLoadBench } from "./load.ts";
import { runForkBench } from "./fork.ts";
import { runStoreBench } from "./store.ts";
import { formatStoreBench } from "./store-report.ts";
import { runEvidenceBench } from "./evidence.ts";
import { runRssBench } from "./rss.ts";
import { runSharedDbBench } from "./shared-db.ts";
import { runDashboardBench } from "./dashboard.ts";
import { runAutomationsBench } from "./automations.ts";
import { runWatchSourceBench } from "./watch-source.ts";
import { runWebhookBench } from "./webhook.ts";
import { runGithubBench } from "./github.ts";
import { runChannelsBench } from "./channels.ts";
import { runStepsBench } from "./steps.ts";
import { runWorkersBench } from "./workers.ts";
import { runWorktreesBench } from "./worktrees.ts";
import { runCostBench } from "./cost.ts";

const benches: Record<string, () => Promise<void> | void> = {
  fork: () => void runForkBench(),
  store: () => {
    console.log(formatStoreBench(runStoreBench()));
    const bun = spawnSync("npx", ["bun", "bench/store.ts"], { stdio: "inherit" });
    if (bun.status !== 0) throw new Error("the store benchmark under Bun failed");
  },
  notify: async () => void (await runNotifyBench()),
  load: async () => void (await runLoadBench()),
  evidence: async () => void (await runEvidenceBench()),
  rss: async () => void (await runRssBench()),
  dashboard: async () => void (await runDashboardBench()),
  automations: async () => void (await runAutomationsBench()),
  // Event triggers: watch latency and 100 watchers' cost (Node, then Bun as inside OpenCode),
  // signed webhook deliveries per second against unsigned ones, GitHub polls that cost rate limit.
  triggers: async () => {
    await runWatchSourceBench();
    const bun = spawnSync("npx", ["bun", "bench/watch-source.ts"], { stdio: "inherit" });
    if (bun.status !== 0) throw new Error("the watch benchmark under Bun failed");
    await runWebhookBench();
    await runGithubBench();
  },
  // Channel delivery latency under Node, then Bun (bun:sqlite and Bun's fetch, as inside OpenCode).
  channels: async () => {
    await runChannelsBench();
    const bun = spawnSync("npx", ["bun", "bench/channels.ts"], { stdio: "inherit" });
    if (bun.status !== 0) throw new Error("the channels benchmark under Bun failed");
  },
  // A steps-only automation firing every second: model requests, wall and CPU per run against sh -c true.
  steps: async () => void (await runStepsBench()),
  // 60 CPU-bound children on the local server alone against local + 2 workers (all on this machine).
  workers: async () => void (await runWorkersBench()),
  // What isolation "worktree" adds to a launch: git alone on this and a 10,000-file repository, then plain against isolated on the real host.
  worktrees: async () => void (await runWorktreesBench()),
  // Spend accounting per message.updated event and in a 200-task fan-out (Node, then Bun as inside OpenCode).
  cost: async () => {
    await runCostBench();
    const bun = spawnSync("npx", ["bun", "bench/cost.ts"], { stdio: "inherit" });
    if (bun.status !== 0) throw new Error("the cost benchmark under Bun failed");
  },
  // Many frequent automations on one real OpenCode for 30 min: RSS slope, bytes per run, the database leveling off (bench/steady.ts).
  steady: async () => void (await (await import("./steady.ts")).runSteadyBench()),
  // Several real OpenCode processes on one database, random SIGKILLs: lost, doubled, stuck, wrong (bench/chaos.ts).
  chaos: async () => void (await (await import("./chaos.ts")).runChaosBench()),
  "shared-db": async () => {
    await runSharedDbBench();
    const bun = spawnSync("npx", ["bun", "bench/shared-db.ts"], { stdio: "inherit" });
    if (bun.status !== 0) throw new Error("the shared-db benchmark under Bun failed");
  },
};

const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !(name in benches));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(", ")}. Choose from: ${Object.keys(benches).join(", ")}.`);
  process.exit(2);
}
// The soaks hold the machine for half an hour each: they run when named.
const SOAKS = new Set(["steady", "chaos"]);
for (const name of chosen.length > 0 ? chosen : Object.keys(benches).filter((b) => !SOAKS.has(b))) {
  console.log(`\n===== ${name} =====`);
  await benches[name]();
}
process.exit(0);

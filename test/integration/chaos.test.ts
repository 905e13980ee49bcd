/**
 * The short chaos run (issue 34): two `opencode serve` processes on one data folder and one
 * database for about 60 s, SIGKILLed and restarted at random, with background tasks (children
 * that succeed, fail with a 400, and hit 500s that OpenCode retries) and interval automations.
 * Leases are 3 s (OPENCODE_ERRANDS_LEASE_MS). Fails on any lost, doubled, stuck or wrong outcome,
 * judged by the checker the bench uses (bench/chaos-check.ts). The long run: `npm run bench -- chaos`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runChaos } from "../../bench/chaos-run.ts";
import { formatVerdict, isClean } from "../../bench/chaos-check.ts";

describe("chaos: two processes on one database, killed at random", () => {
  it("loses nothing, doubles nothing, leaves nothing stuck and settles each task as its child's script says", { timeout: 300_000 }, async () => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
    const lines: string[] = [];
    const result = await runChaos({
      processes: 2, durationMs: 60_000, tasks: 24, automations: 3, automationEverySec: 10, seed,
      killEveryMs: 15_000, leaseMs: 3000, drainMs: 60_000, log: (line) => lines.push(line),
      pluginDir: process.env.CHAOS_PLUGIN_DIR, // another commit's src, to see the run fail on it
    });
    const report = `seed ${seed}, ${result.kills} kills\n${formatVerdict(result.verdict)}\n${lines.join("\n")}`;
    assert.ok(result.kills >= 2, `the run killed at least twice\n${report}`);
    assert.ok(result.verdict.counts.tasks >= 15, `most tasks were launched\n${report}`);
    assert.ok(isClean(result.verdict), report);
  });
});

/**
 * Evidence benchmark.
 * 1. Collection on the event path: 10,000 tool parts (pending, running, completed of write, edit
 *    and bash calls, as the real host sends them) through the plugin's event handling, with the
 *    evidence service and without it (the baseline), on a SQLite database file. Goal: the
 *    difference is under 1 ms per part.
 * 2. Verification of 1,000 written files (stat, read, sha256, compare with the copy before the
 *    write; and once against git's index), beside a baseline that only stats each file. Goal: under 100 ms.
 * Run alone with `npx tsx bench/evidence.ts`, or call runEvidenceBench() from another script.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FakeClock } from "../test/helpers/fake-clock.ts";
import { FakeHost } from "../test/helpers/fake-host.ts";
import { TaskManager } from "../src/core/task-manager.ts";
import { DEFAULT_OPTIONS } from "../src/options/options.ts";
import { SqliteTaskStore } from "../src/store/sqlite-task-store.ts";
import { SqliteEvidenceStore } from "../src/store/sqlite-evidence-store.ts";
import { EvidenceService } from "../src/evidence/evidence-service.ts";
import { normalizeEvent } from "../src/host/normalize-event.ts";
import { verifyFiles, snapshotFile } from "../src/evidence/verify-files.ts";
import type { FileEvidence } from "../src/evidence/evidence-types.ts";
import type { Task } from "../src/core/task.ts";

const PARTS = 10_000;
const FILES = 1_000;

export type EvidenceBenchResult = {
  collection: { parts: number; baselineMs: number; withEvidenceMs: number; addedPerPartMs: number };
  verification: { files: number; statOnlyMs: number; beforeWriteMs: number; gitIndexMs: number };
  goals: { collectionUnder1msPerPart: boolean; verificationUnder100ms: boolean };
};

export async function runEvidenceBench({ print = true } = {}): Promise<EvidenceBenchResult> {
  const root = mkdtempSync(join(tmpdir(), "ocbt-bench-evidence-"));
  try {
    const collection = { parts: PARTS, ...measureCollection(root) };
    const verification = { files: FILES, ...(await measureVerification(root)) };
    const result: EvidenceBenchResult = {
      collection,
      verification,
      goals: {
        collectionUnder1msPerPart: collection.addedPerPartMs < 1,
        verificationUnder100ms: Math.max(verification.beforeWriteMs, verification.gitIndexMs) < 100,
      },
    };
    if (print) printResult(result);
    return result;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The same parts twice, each time on a fresh database: the core's event handling alone, then with the evidence service. */
function measureCollection(root: string): { baselineMs: number; withEvidenceMs: number; addedPerPartMs: number } {
  const baselineMs = bestOf(3, (n) => collectOnce(join(root, `base-${n}.db`), false));
  const withEvidenceMs = bestOf(3, (n) => collectOnce(join(root, `evid-${n}.db`), true));
  return { baselineMs, withEvidenceMs, addedPerPartMs: (withEvidenceMs - baselineMs) / PARTS };
}

function collectOnce(dbPath: string, withEvidence: boolean): number {
  const clock = new FakeClock();
  const host = new FakeHost(clock);
  const store = SqliteTaskStore.open({ path: dbPath, projectId: "bench" });
  const manager = new TaskManager(host, store, clock, DEFAULT_OPTIONS);
  const evidence = new EvidenceService(manager.runningTasks(), new SqliteEvidenceStore(store.db, store.projectId), root(dbPath), DEFAULT_OPTIONS);
  const task = runningTask(clock.now());
  store.save(task);
  manager.life.progress.track(task.id, task.progress);
  const raw = toolParts(task.id);
  const started = performance.now();
  for (const event of raw) {
    const normalized = normalizeEvent(event);
    if (!normalized) continue;
    manager.handleEvent(normalized);
    if (withEvidence) evidence.handleEvent(normalized);
  }
  const ms = performance.now() - started;
  manager.dispose();
  store.close();
  return ms;
}

/** 10,000 parts: calls of write, edit and bash in turn, each pending, running, then completed (a bash one in ten fails). */
function toolParts(sessionID: string): unknown[] {
  const events: unknown[] = [];
  for (let call = 0; events.length < PARTS; call++) {
    const tool = ["write", "edit", "bash"][call % 3]!;
    const input = tool === "bash" ? { command: `npm test -- --grep case${call}`, description: "tests" }
      : tool === "write" ? { filePath: `src/file${call % 500}.ts`, content: `export const x = ${call};\n`.repeat(20) }
      : { filePath: `src/file${call % 500}.ts`, oldString: `x = ${call - 1}`, newString: `x = ${call}` };
    const base = { id: `prt_${call}`, messageID: `msg_${call >> 4}`, sessionID, type: "tool", tool, callID: `call_${call}` };
    const states = [
      { status: "pending", input: {}, raw: "" },
      { status: "running", input, time: { start: call } },
      tool === "bash" && call % 10 === 2
        ? { status: "error", input, error: "Command timed out\nafter 120000 ms", time: { start: call, end: call + 5 } }
        : { status: "completed", input, output: "ok", title: "", time: { start: call, end: call + 5 }, metadata: tool === "bash" ? { exit: call % 7 === 0 ? 1 : 0, output: "ok" } : tool === "edit" ? { filediff: { additions: 1, deletions: 1 } } : { exists: true } },
    ];
    for (const state of states) events.push({ type: "message.part.updated", properties: { sessionID, part: { ...base, state }, time: call } });
  }
  return events.slice(0, PARTS);
}

async function measureVerification(rootDir: string): Promise<{ statOnlyMs: number; beforeWriteMs: number; gitIndexMs: number }> {
  const project = join(rootDir, "project");
  mkdirSync(join(project, "src"), { recursive: true });
  const paths = Array.from({ length: FILES }, (_, i) => `src/f${i}.ts`);
  for (const [i, path] of paths.entries()) writeFileSync(join(project, path), `// file ${i}\n${"const a = 1;\n".repeat(100 + (i % 200))}`);
  git(project, "init", "-q");
  git(project, "add", ".");
  git(project, "commit", "-q", "-m", "base");
  const befores = await Promise.all(paths.map((p) => snapshotFile(join(project, p))));
  for (const [i, path] of paths.entries()) if (i % 2 === 0) writeFileSync(join(project, path), `// changed ${i}\n`);
  const withBefore: FileEvidence[] = paths.map((path, i) => ({ path, actions: { edited: 1 }, tools: { edit: 1 }, seq: i, before: { exists: true, sha256: befores[i]!.sha256! } }));
  const withoutBefore: FileEvidence[] = withBefore.map(({ before: _before, ...file }) => file);
  const statOnlyMs = await bestOfAsync(5, async () => {
    await Promise.all(paths.map((p) => stat(join(project, p)).catch(() => undefined)));
  });
  const beforeWriteMs = await bestOfAsync(5, async () => check(await verifyFiles(project, withBefore), "before-write"));
  const gitIndexMs = await bestOfAsync(5, async () => check(await verifyFiles(project, withoutBefore), "git-index"));
  return { statOnlyMs, beforeWriteMs, gitIndexMs };
}

/** The benchmark must measure real work: half the files changed, half did not. */
function check(files: FileEvidence[], basis: string): void {
  const unchanged = files.filter((f) => f.check?.verdict === "unchanged").length;
  if (unchanged !== FILES / 2 || files.some((f) => f.check?.basis !== basis)) throw new Error(`verification went wrong: ${unchanged} unchanged, basis ${files[0]?.check?.basis}`);
}

function runningTask(now: number): Task {
  return {
    id: "ses_bench", parentSessionID: "ses_parent", batchId: "msg_b", description: "bench", prompt: "p", agent: "general",
    model: { providerID: "m", modelID: "m" }, parentAgent: "build", status: "running", isForked: false, resumeCount: 0,
    progress: { toolCalls: 0, lastTools: [], lastActivityAt: now }, createdAt: now, promptedAt: now, startedAt: now,
  };
}

function root(dbPath: string): string {
  return join(dbPath, "..");
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", ...args], { cwd, stdio: "ignore" });
}

function bestOf(runs: number, fn: (n: number) => number): number {
  return Math.min(...Array.from({ length: runs }, (_, n) => fn(n)));
}

async function bestOfAsync(runs: number, fn: () => Promise<void>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

function printResult(r: EvidenceBenchResult): void {
  const c = r.collection;
  const v = r.verification;
  console.log(`evidence collection, ${c.parts} tool parts (best of 3, SQLite file):`);
  console.log(`  core event handling alone (baseline): ${c.baselineMs.toFixed(1)} ms (${(c.baselineMs / c.parts * 1000).toFixed(1)} µs/part)`);
  console.log(`  with evidence:                        ${c.withEvidenceMs.toFixed(1)} ms (${(c.withEvidenceMs / c.parts * 1000).toFixed(1)} µs/part)`);
  console.log(`  added by evidence: ${(c.addedPerPartMs * 1000).toFixed(1)} µs/part (${(c.withEvidenceMs / c.baselineMs).toFixed(1)}x the baseline) — goal < 1 ms: ${r.goals.collectionUnder1msPerPart ? "met" : "MISSED"}`);
  console.log(`verification of ${v.files} files (best of 5):`);
  console.log(`  stat only (baseline):              ${v.statOnlyMs.toFixed(1)} ms`);
  console.log(`  verify against the before copy:    ${v.beforeWriteMs.toFixed(1)} ms (${(v.beforeWriteMs / v.statOnlyMs).toFixed(1)}x)`);
  console.log(`  verify against git's index:        ${v.gitIndexMs.toFixed(1)} ms (${(v.gitIndexMs / v.statOnlyMs).toFixed(1)}x)`);
  console.log(`  goal < 100 ms: ${r.goals.verificationUnder100ms ? "met" : "MISSED"}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runEvidenceBench();

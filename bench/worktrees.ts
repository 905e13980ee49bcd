/**
 * What isolation "worktree" adds to launching a child, on this repository and on a generated
 * 10,000-file one (goal: under 300 ms added at p50 on the large one).
 * 1. Git alone, in this process: a launch's createWorktree + nameBranch, with a spare checkout
 *    ready (what the plugin does once it has made one) and without (a full checkout: the first
 *    launch, or the second of two at once); settleWorktree after the child changed one file; and
 *    removeWorktree. Launches come in a row and removals after all of them, as in a fan-out.
 * 2. On the real host (mock model, large repository; skipped with BENCH_WORKTREES_REAL=0): the
 *    parent's background_task call, launch to answer, plain against isolation "worktree",
 *    alternating, each from a fresh parent session: the baseline is measured in the same run.
 *    Each launch waits (off the clock) until the plugin's spare checkout is ready; the first
 *    isolated launch, before any spare, is reported on its own.
 * BENCH_WORKTREES_SNAPSHOT=0 runs the server with OpenCode's snapshots off; BENCH_WORKTREES_GIT=0 skips part 1.
 * Run alone with `npx tsx bench/worktrees.ts [rounds]` (under the real-host lock), or call runWorktreesBench().
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { createWorktree, nameBranch, removeWorktree, settleWorktree, sparesMade, type Worktree } from "../src/worktrees/worktrees.ts";
import { percentile } from "./stats.ts";

const ROUNDS = 10;
const LARGE_FILES = 10_000;

type Spread = { p50: number; p95: number };
export type GitFigures = { repo: string; files: number; fresh: Spread; spare: Spread; settle: Spread; remove: Spread };
/** `first`: the first isolated launch of the server, with no spare yet (a full checkout). */
export type RealHostFigures = { plain: Spread; isolated: Spread; ratio: number; first: number; tool: { plain: Spread; isolated: Spread } };

const spread = (samples: number[]): Spread => ({ p50: percentile(samples, 50), p95: percentile(samples, 95) });
const git = (cwd: string, args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const ms = (n: number) => `${n.toFixed(0)} ms`;
const show = (s: Spread) => `p50 ${ms(s.p50)}  p95 ${ms(s.p95)}`;

/** A repository of `files` small files in folders of 100, one commit, packed. */
function generatedRepo(dir: string, files: number): string {
  const repo = join(dir, "large");
  for (let i = 0; i < files; i++) {
    const folder = join(repo, "src", `m${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `f${i}.ts`), `export const v${i} = ${i};\n// ${"x".repeat(200)}\n`);
  }
  git(repo, ["init", "--quiet", "-b", "main"]);
  git(repo, ["add", "--all"]);
  git(repo, ["-c", "gc.auto=0", "commit", "--quiet", "-m", "generated"]);
  git(repo, ["repack", "-a", "-d", "--quiet"]);
  return repo;
}

async function timed<T>(samples: number[], fn: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const value = await fn();
  samples.push(performance.now() - t);
  return value;
}

async function launch(repo: string, root: string, i: number, spare: boolean): Promise<Worktree> {
  const wt = await createWorktree({ repo, root, description: `bench round ${i}`, from: "head", spare: spare && "always" });
  return nameBranch(wt, `bench${spare ? "s" : "f"}${i}`, `bench round ${i}`);
}

async function measureGit(repo: string, root: string, rounds: number): Promise<GitFigures> {
  const fresh: number[] = [], spare: number[] = [], settle: number[] = [], remove: number[] = [];
  const made: Worktree[] = [];
  for (let i = 0; i < rounds; i++) made.push(await timed(fresh, () => launch(repo, root, i, false)));
  for (let i = 0; i < rounds; i++) {
    await sparesMade(); // between launches the spare is made in the background; not on the launch's clock
    made.push(await timed(spare, () => launch(repo, root, i, true)));
  }
  await sparesMade();
  for (const [i, wt] of made.entries()) {
    writeFileSync(join(wt.path, "changed-by-child.txt"), `round ${i}\n`);
    await timed(settle, () => settleWorktree(wt, `bench round ${i}`));
  }
  for (const wt of made) await timed(remove, () => removeWorktree(wt, { deleteBranch: true }));
  const files = git(repo, ["ls-files"]).split("\n").length;
  return { repo, files, fresh: spread(fresh), spare: spread(spare), settle: spread(settle), remove: spread(remove) };
}

function reportGit(f: GitFigures): void {
  console.log(`${f.repo} (${f.files.toLocaleString("en")} files), git alone:`);
  console.log(`  launch adds, spare ready (claim + branch + name)  ${show(f.spare)}`);
  console.log(`  launch adds, full checkout (create + name)       ${show(f.fresh)}`);
  console.log(`  settle adds (commit the work, log, diff --stat)  ${show(f.settle)}`);
  console.log(`  remove (worktree and branch)                     ${show(f.remove)}`);
}

/** Whether the plugin has a spare checkout ready under `<data folder>/worktrees/<project>/`. */
function spareReady(worktrees: string): boolean {
  return readdirSync(worktrees, { withFileTypes: true }).some((project) => project.isDirectory() &&
    readdirSync(join(worktrees, project.name)).some((n) => n.startsWith(".spare-") && !n.startsWith(".spare-making-")));
}

async function measureRealHost(repo: string, rounds: number): Promise<RealHostFigures> {
  const { startStack, launchTask, pluginDbPath, waitUntil } = await import("../test/harness/plugin-stack.ts");
  const snapshot = process.env.BENCH_WORKTREES_SNAPSHOT !== "0"; // OpenCode's own snapshots of each directory (its default: on)
  const stack = await startStack({ reuse: { projectDir: repo }, config: { permission: { background_automation: "allow" }, ...(snapshot ? {} : { snapshot: false }) } });
  const plain: number[] = [], isolated: number[] = [], plainTool: number[] = [], isolatedTool: number[] = [];
  let first = 0;
  const worktrees = join(dirname(pluginDbPath(stack.server)), "worktrees");
  try {
    for (let i = 0; i < rounds + 1; i++) {
      for (const isolation of ["none", "worktree"] as const) {
        // Not on the clock: the spare the previous isolated launch started (both kinds wait, so both see a quiet machine).
        if (i > 0) await waitUntil(() => spareReady(worktrees) || undefined, { timeoutMs: 120_000, what: "a spare checkout" });
        const parent = await stack.newSession(`bench ${isolation} ${i}`);
        const t = performance.now();
        await launchTask(stack, parent, { description: `bench ${isolation} ${i}`, prompt: "REPLY done", isolation });
        const took = performance.now() - t;
        if (i > 0) (isolation === "none" ? plain : isolated).push(took); // round 0 warms up
        else if (isolation === "worktree") first = took;
        const part = (await stack.messages(parent)).flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "background_task");
        if (i > 0) (isolation === "none" ? plainTool : isolatedTool).push(part.state.time.end - part.state.time.start);
      }
    }
  } finally {
    // A spare still being checked out would write into the folder the harness removes.
    const making = () => readdirSync(worktrees, { recursive: true, encoding: "utf8" }).some((p) => p.includes(".spare-making-"));
    await waitUntil(() => !making() || undefined, { timeoutMs: 120_000, what: "the spare checkout made" }).catch(() => undefined);
    await stack.stop();
  }
  return {
    plain: spread(plain), isolated: spread(isolated), ratio: percentile(isolated, 50) / percentile(plain, 50), first,
    tool: { plain: spread(plainTool), isolated: spread(isolatedTool) },
  };
}

function reportRealHost(f: RealHostFigures): void {
  console.log(`real host, large repository: background_task call to its answer (parent turn included)`);
  console.log(`  plain                 ${show(f.plain)}`);
  console.log(`  isolation "worktree"  ${show(f.isolated)}  (${f.ratio.toFixed(2)}x plain at p50, +${ms(f.isolated.p50 - f.plain.p50)}; spare ready)`);
  console.log(`  the first isolated launch (no spare yet, a full checkout): ${ms(f.first)}`);
  console.log(`  the tool call alone (OpenCode's start and end of the part): plain ${show(f.tool.plain)}, isolated ${show(f.tool.isolated)}`);
}

export async function runWorktreesBench({ rounds = ROUNDS, print = true } = {}): Promise<{ git: GitFigures[]; realHost?: RealHostFigures }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-worktrees-"));
  Object.assign(process.env, { GIT_AUTHOR_NAME: "bench", GIT_AUTHOR_EMAIL: "bench@localhost", GIT_COMMITTER_NAME: "bench", GIT_COMMITTER_EMAIL: "bench@localhost" });
  try {
    if (print) console.log(`load average at start: ${loadavg().map((l) => l.toFixed(1)).join(" ")} (${rounds} rounds)`);
    const here = git(process.cwd(), ["rev-parse", "--show-toplevel"]);
    const large = generatedRepo(dir, LARGE_FILES);
    const figures: GitFigures[] = [];
    for (const [name, repo] of process.env.BENCH_WORKTREES_GIT === "0" ? [] : [["here", here], ["large", large]] as const) {
      figures.push(await measureGit(repo, join(dir, "worktrees", name), rounds));
      if (print) reportGit(figures.at(-1)!);
    }
    if (process.env.BENCH_WORKTREES_REAL === "0") return { git: figures };
    const realHost = await measureRealHost(large, rounds);
    if (print) {
      reportRealHost(realHost);
      console.log(`load average at end: ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    }
    return { git: figures, realHost };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await runWorktreesBench({ rounds: Number(process.argv[2] ?? ROUNDS) });
  process.exit(0);
}

/**
 * A chaos run (issue 34): several real `opencode serve` processes on one data folder and one
 * database, random SIGKILLs and restarts, background tasks launched through parent sessions and
 * interval automations; then what bench/chaos-check.ts judges. Each process incarnation has a mock
 * model of its own, so every model request names the process that made it; all mocks share one
 * responder, which answers a child by its script (the first user message), whatever it is told
 * later ("continue" after a takeover included): ok (a reply), fail (a 400), flaky (500s that
 * OpenCode retries, then a reply).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startStack, call, launchTask, toolOutputs, queryDb, waitUntil, type Stack } from "../test/harness/plugin-stack.ts";
import { defaultResponder, isPluginNotice, lastUserText, messageText, startMockModel, type MockModel, type MockReply, type MockRequest } from "../test/harness/mock-model.ts";
import { main as cli } from "../src/cli/main.ts";
import { seededRandom } from "../test/helpers/synthetic-history.ts";
import { checkChaos, isClean, type ChaosObservation, type ChaosVerdict, type ChildRequest, type TaskRow } from "./chaos-check.ts";

export type ChaosOptions = {
  processes: number; durationMs: number; tasks: number; automations: number; seed: number;
  /** Lease of tasks and runs (OPENCODE_ERRANDS_LEASE_MS); the plugin's own when undefined. */
  leaseMs?: number;
  /** Mean time between two kills. */
  killEveryMs: number;
  /** Interval of the automations (each runs about durationMs / everyS times). */
  automationEverySec: number;
  /** The plugin package to load (a snapshot of a commit, so that edits in the checkout during a long run do not change it). */
  pluginDir?: string;
  /** How long after the end a task or run may still be going. */
  drainMs: number;
  log?: (line: string) => void;
};

export type ChaosResult = { verdict: ChaosVerdict; observation: ChaosObservation; kills: number; launchFailures: number; wallMs: number };

type Proc = { name: string; stack: Stack; mock: MockModel; startedAt: number; endedAt?: number };
const CHILD_SCRIPT = /CHAOS (T\d+) (ok|fail|flaky) (\d+)(?: (\d+))?/;
const RUN_CONTEXT = /\[Automation "[^"]*" \((\w+)\), run #(\d+)/;

const firstUserText = (req: MockRequest) => {
  const first = req.body.messages.find((m) => m.role === "user");
  return first ? messageText(first) : "";
};

/** The child a request belongs to, or undefined for a parent, a report session or a title. */
export function childKey(req: MockRequest): string | undefined {
  if (req.isTitle) return undefined;
  const first = firstUserText(req);
  if (first.startsWith("CALL ")) return undefined;
  const script = CHILD_SCRIPT.exec(first);
  if (script) return script[1];
  const run = RUN_CONTEXT.exec(first);
  return run ? `${run[1]}#${run[2]}` : undefined;
}

function chaosResponder(): (req: MockRequest) => MockReply {
  const flakyCalls = new Map<string, number>();
  return (req) => {
    const key = childKey(req);
    const script = key && CHILD_SCRIPT.exec(firstUserText(req));
    if (!script) {
      // A parent woken by a notice only acknowledges: replaying its launch would launch again.
      if (!req.isTitle && isPluginNotice(lastUserText(req))) return { text: "noted" };
      return defaultResponder(req);
    }
    const [, id, kind, delay, fails] = script;
    if (kind === "fail") return { error: { status: 400, message: `chaos ${id}: bad request` } };
    const n = flakyCalls.get(id) ?? 0;
    flakyCalls.set(id, n + 1);
    if (kind === "flaky" && n < Number(fails)) return { error: { status: 500, message: `chaos ${id}: provider down` } };
    return { delayMs: Number(delay), text: `CHAOS ${id} done` };
  };
}

export function expectedOf(prompt: string): TaskRow["expected"] | undefined {
  const m = CHILD_SCRIPT.exec(prompt);
  if (!m) return undefined;
  return m[2] === "fail" ? { status: "error" } : { status: "completed", result: `CHAOS ${m[1]} done` };
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? (() => undefined);
  const random = seededRandom(o.seed);
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "chaos-"));
  const dbPath = join(dir, "errands.db");
  const responder = chaosResponder();
  const all: Proc[] = [];
  const slots: Array<Proc | undefined> = [];
  let generation = 0;
  let first: Proc | undefined;
  let keep = false; // the database of a run that broke an invariant stays, for a post-mortem

  const start = async (slot: number): Promise<Proc> => {
    const mock = await startMockModel({ responder });
    const stack = await startStack({
      mock, pluginDir: o.pluginDir,
      env: o.leaseMs ? { OPENCODE_ERRANDS_LEASE_MS: String(o.leaseMs) } : {},
      pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow" } },
      reuse: first && { homeDir: first.stack.server.homeDir, projectDir: first.stack.server.projectDir },
    });
    const proc: Proc = { name: `p${slot}.${++generation}`, stack, mock, startedAt: Date.now() };
    first ??= proc;
    all.push(proc);
    slots[slot] = proc;
    log(`${iso()} started ${proc.name} (pid ${stack.server.pid})`);
    return proc;
  };
  const live = () => slots.filter((p): p is Proc => p !== undefined);
  const pick = () => { const l = live(); return l[Math.floor(random() * l.length)]; };

  try {
    for (let i = 0; i < o.processes; i++) await start(i);
    const report = await createAutomations(first!, o, log);
    const t0 = Date.now();
    const end = t0 + o.durationMs;
    const launched: Array<{ key: string; id: string }> = [];
    let launchFailures = 0;
    let kills = 0;

    const launcher = async (lane: number, lanes: number) => {
      const gap = o.durationMs / Math.max(1, o.tasks);
      for (let n = lane + 1; n <= o.tasks && Date.now() < end; n += lanes) {
        const due = t0 + n * gap;
        if (due > Date.now()) await sleep(Math.min(due - Date.now(), end - Date.now()));
        if (Date.now() >= end) break;
        const proc = pick();
        if (!proc) { launchFailures++; continue; }
        const r = random();
        const kind = r < 0.6 ? "ok" : r < 0.8 ? "fail" : "flaky";
        const prompt = `CHAOS T${n} ${kind} ${Math.floor(200 + random() * 4000)}${kind === "flaky" ? ` ${1 + Math.floor(random() * 2)}` : ""}`;
        try {
          const parent = await proc.stack.newSession(`chaos parent T${n}`);
          launched.push({ key: `T${n}`, id: await launchTask(proc.stack, parent, { description: `chaos T${n}`, prompt }) });
        } catch {
          launchFailures++; // its process was killed mid-launch: a task stored before is still checked
        }
      }
    };
    const killer = async () => {
      while (Date.now() < end) {
        await sleep(Math.min(o.killEveryMs * (0.5 + random()), Math.max(0, end - Date.now())));
        if (Date.now() >= end) break;
        const slot = Math.floor(random() * o.processes);
        const victim = slots[slot];
        if (!victim) continue;
        slots[slot] = undefined;
        await victim.stack.server.kill();
        victim.endedAt = Date.now();
        victim.stack.events.close();
        kills++;
        log(`${iso()} SIGKILL ${victim.name}`);
        await sleep(500 + random() * 2500);
        await start(slot).catch((error) => log(`${iso()} restart of slot ${slot} failed: ${String(error).slice(0, 300)}`));
      }
    };
    await Promise.all([launcher(0, 2), launcher(1, 2), killer()]);
    log(`${iso()} chaos over: ${launched.length} launched, ${kills} kills; draining`);
    const checkedAt = await drain(dbPath, o.drainMs);
    const observation = await observe(dbPath, all, live()[0] ?? (await start(0)), launched, report, checkedAt, o);
    const verdict = checkChaos(observation);
    if (!isClean(verdict)) keep = true;
    return { verdict, observation, kills, launchFailures, wallMs: Date.now() - started };
  } finally {
    for (const proc of live().reverse()) {
      if (proc !== first) await proc.stack.stop().catch(() => undefined);
    }
    if (first && !first.endedAt) await first.stack.stop().catch(() => undefined);
    else await first?.stack.server.removeDirs().catch(() => undefined);
    for (const proc of all) await proc.mock.close().catch(() => undefined);
    if (keep) log(`kept the database for a post-mortem: ${dbPath}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Interval automations, each reporting to a session of its own; one in five notifies always. */
async function createAutomations(proc: Proc, o: ChaosOptions, log: (line: string) => void): Promise<Map<string, { session: string; notifies: boolean }>> {
  const out = new Map<string, { session: string; notifies: boolean }>();
  const maxRuns = Math.max(1, Math.floor(o.durationMs / 1000 / o.automationEverySec));
  for (let i = 0; i < o.automations; i++) {
    const session = await proc.stack.newSession(`chaos automation A${i}`);
    const notifies = i % 5 === 0;
    const args = { title: `chaos A${i}`, prompt: `SLOW ${300 + (i % 7) * 300}\nREPLY A${i} tick`, triggers: [{ every: `${o.automationEverySec}s` }], max_runs: maxRuns, notify: notifies ? "always" : "never" };
    await proc.stack.say(session, call("task_create", args));
    const id = /automation (au\w+)/.exec((await toolOutputs(proc.stack, session, "task_create")).at(-1) ?? "")?.[1];
    if (!id) throw new Error(`task_create made no automation: ${(await toolOutputs(proc.stack, session, "task_create")).at(-1)}`);
    out.set(id, { session, notifies });
  }
  log(`${iso()} ${o.automations} automations every ${o.automationEverySec} s, ${maxRuns} runs each`);
  return out;
}

/** Until nothing runs, no run is going and every notice is delivered, or drainMs. */
async function drain(dbPath: string, drainMs: number): Promise<number> {
  const busy = () => {
    const [t] = queryDb(dbPath, "SELECT count(*) AS n FROM tasks WHERE status NOT IN ('completed','error','cancelled')");
    const [r] = queryDb(dbPath, "SELECT count(*) AS n FROM automation_runs WHERE status IN ('waiting','starting','running')");
    const [n] = queryDb(dbPath, "SELECT count(*) AS n FROM notifications WHERE delivered_at IS NULL");
    return t.n + r.n + n.n;
  };
  await waitUntil(() => busy() === 0, { timeoutMs: drainMs, intervalMs: 1000, what: "drained" }).catch(() => undefined);
  await sleep(3000); // the parents' turns on the last notices
  return Date.now();
}

async function observe(dbPath: string, all: Proc[], reader: Proc, launched: Array<{ key: string; id: string }>, report: Map<string, { session: string; notifies: boolean }>, checkedAt: number, o: ChaosOptions): Promise<ChaosObservation> {
  const requests: ChildRequest[] = all.flatMap((p) => p.mock.requests().flatMap((r) => {
    const key = childKey(r);
    return key ? [{ proc: p.name, key, at: r.at, endedAt: r.endedAt }] : [];
  }));
  const rows = queryDb(dbPath, "SELECT id, parent_session_id, prompt, status, result, error, created_at, settled_at FROM tasks");
  const tasks: TaskRow[] = rows.flatMap((t) => {
    const expected = expectedOf(t.prompt);
    const key = CHILD_SCRIPT.exec(t.prompt)?.[1];
    return expected && key ? [{ key, id: t.id, status: t.status, result: t.result, error: t.error, createdAt: t.created_at, settledAt: t.settled_at, expected }] : [];
  });
  const parents = new Set(rows.filter((t) => CHILD_SCRIPT.test(t.prompt)).map((t) => t.parent_session_id as string));
  const notices: ChaosObservation["notices"] = [];
  for (const parent of parents) {
    for (const text of await reader.stack.notifications(parent)) {
      const m = /<background-task-notification[^>]*task_id="(\w+)" status="(\w+)"(?![^>]*follow_up)/.exec(text);
      if (m) notices.push({ taskId: m[1], status: m[2] });
    }
  }
  const runNotices: ChaosObservation["runNotices"] = [];
  for (const [, { session, notifies }] of report) {
    if (!notifies) continue;
    for (const m of await reader.stack.messages(session)) {
      if (m.info.role !== "user") continue;
      const text = m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
      for (const n of text.matchAll(/<automation-run automation="(\w+)" run="(\d+)"/g)) runNotices.push({ automationId: n[1], runNo: Number(n[2]) });
    }
  }
  const runs = queryDb(dbPath, "SELECT automation_id, run_no, trigger_id, planned_at, status, created_at, started_at, task_id, summary FROM automation_runs")
    .map((r) => ({ automationId: r.automation_id, runNo: r.run_no, triggerId: r.trigger_id, plannedAt: r.planned_at, status: r.status, createdAt: r.created_at, startedAt: r.started_at, taskId: r.task_id, summary: r.summary }));
  return {
    cliTasks: await cliTasks(dbPath),
    procs: all.map((p) => ({ proc: p.name, startedAt: p.startedAt, endedAt: p.endedAt })),
    requests, tasks, launched, notices, runs, runNotices,
    notifyingAutomations: [...report].filter(([, r]) => r.notifies).map(([id]) => id),
    checkedAt, stuckAfterMs: o.drainMs,
  };
}

/** The tasks as the CLI's export reads them. */
async function cliTasks(dbPath: string): Promise<Array<{ id: string; status: string }>> {
  let out = "";
  const io = { stdout: (t: string) => void (out += t), stderr: () => undefined, env: {}, now: Date.now };
  const code = await cli(["export", "--db", dbPath], io as never);
  if (code !== 0) throw new Error(`opencode-errands export failed (${code})`);
  return (JSON.parse(out).tasks as Array<{ id: string; status: string }>).map((t) => ({ id: t.id, status: t.status }));
}

const iso = () => new Date().toISOString().slice(11, 19);

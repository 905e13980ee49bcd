/**
 * Several `opencode serve` processes on one data folder and one database (issue 34): every running
 * task and run names its owner with a lease. OpenCode's session status is per process, so a child
 * streaming in A looks idle to B: only the owner may judge it. Leases are 3 s here
 * (OPENCODE_ERRANDS_LEASE_MS), renewed every second by their holder.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startStack, call, launchTask, toolOutputs, waitUntil, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { lastUserText, startMockModel, type MockModel } from "../harness/mock-model.ts";
import { CONTINUE_PROMPT } from "../../src/core/recovery.ts";

const LEASE_MS = 3000;

describe("owners with leases across processes on one data folder", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-owner-"));
  let db = 0;
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A process on `dbPath`; with `reuse`, on the same home and project (the same data folder) as that one. */
  const start = async (dbPath: string, reuse?: Stack, env: Record<string, string> = {}) => {
    mock ??= await startMockModel();
    const stack = await startStack({
      mock, env: { OPENCODE_ERRANDS_LEASE_MS: String(LEASE_MS), ...env }, pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow" } },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };
  const newDb = () => join(dir, `tasks-${++db}.db`);
  const task = (dbPath: string, id: string) => queryDb(dbPath, "SELECT status, result, error, claimed_by FROM tasks WHERE id = ?", id)[0];
  const continues = () => mock.requests().filter((r) => lastUserText(r).includes(CONTINUE_PROMPT));
  const completedNotices = async (stack: Stack, parent: string, id: string) =>
    (await stack.notifications(parent)).filter((n) => n.includes(`task_id="${id}"`) && n.includes('status="completed"'));

  it("a child streams in A while B is SIGKILLed and restarted: no continue, no request from B, settled once with its real result", async () => {
    const dbPath = newDb();
    const a = await start(dbPath);
    const b = await start(dbPath, a);
    const parent = await a.newSession("parent: streams in A");
    const prompt = "SLOW 12000\nREPLY the real result";
    const id = await launchTask(a, parent, { description: "streams in A", prompt });
    await waitUntil(() => mock.inFlight().current > 0, { what: "the child's model call in flight in A" });
    await b.server.kill();
    b.events.close();
    await start(dbPath, a); // B again: its recovery looks at every running task
    const done = await waitUntil(() => { const t = task(dbPath, id); return t?.status !== "running" && t; }, { timeoutMs: 30_000, what: "the child to settle" });
    assert.equal(done.status, "completed", done.error);
    assert.equal(done.result, "the real result");
    assert.deepEqual(continues().map(lastUserText), [], "nobody told the child to continue");
    assert.equal(mock.requests().filter((r) => lastUserText(r) === prompt).length, 1, "one model request of the child: A's");
    await waitUntil(async () => (await completedNotices(a, parent, id)).length > 0, { what: "the parent's notice" });
    assert.equal((await completedNotices(a, parent, id)).length, 1, "the parent is told once");
    assert.equal((await a.notifications(parent)).some((n) => n.includes("interrupted by an OpenCode restart")), false, "no false interruption note");
  });

  it("A holds a running task and is SIGKILLed: B, running all along, takes it over within one lease and settles it once", async () => {
    const dbPath = newDb();
    const a = await start(dbPath);
    const b = await start(dbPath, a);
    const parent = await a.newSession("parent: A dies");
    const before = continues().length;
    const launchedAt = Date.now();
    const id = await launchTask(a, parent, { description: "A dies", prompt: "SLOW 30000\nREPLY never: A dies first" });
    await waitUntil(() => mock.inFlight().current > 0, { what: "the child's model call in flight in A" });
    // A prompt not answered within 5 s of being sent is an interruption; before that, recovery waits for it.
    await sleep(Math.max(0, 5500 - (Date.now() - launchedAt)));
    const killedAt = Date.now();
    await a.server.kill();
    a.events.close();
    await waitUntil(() => continues().length > before, { timeoutMs: 20_000, what: "B tells the child to continue" });
    const tookMs = Date.now() - killedAt;
    assert.ok(tookMs < LEASE_MS + 2000, `taken over ${tookMs} ms after the kill (lease ${LEASE_MS} ms)`);
    const done = await waitUntil(() => { const t = task(dbPath, id); return t?.status !== "running" && t; }, { timeoutMs: 30_000, what: "the child to settle in B" });
    assert.equal(done.status, "completed", done.error);
    assert.match(done.result, /ok: OpenCode was restarted/);
    assert.equal(continues().length - before, 1, "told to continue once");
    await waitUntil(async () => (await completedNotices(b, parent, id)).length > 0, { what: "the parent's notice from B" });
    assert.equal((await completedNotices(b, parent, id)).length, 1, "the parent is told once");
  });

  it("a process dies between claiming a run and saving its task: the run ends as an error within one lease, paused or not, and the next firing runs", async () => {
    const dbPath = newDb();
    const a = await start(dbPath, undefined, { OPENCODE_ERRANDS_FAULT: "exit-before-run-task" });
    const parent = await a.newSession("parent: run stranded");
    await a.say(parent, call("task_create", { title: "stranded", prompt: "REPLY run done", notify: "never" }));
    const id = /Created automation (au\w+)/.exec((await toolOutputs(a, parent, "task_create")).at(-1) ?? "")?.[1];
    assert.ok(id, "task_create created the automation");
    await a.say(parent, call("task_update", { id, enabled: false }));
    await waitUntil(() => queryDb(dbPath, "SELECT enabled FROM automations WHERE id = ?", id)[0]?.enabled === 0, { what: "paused" });
    const b = await start(dbPath, a); // up before the crash, with the automation layer loaded (the project has one)
    const run = (n: number) => queryDb(dbPath, "SELECT status, summary, claimed_by FROM automation_runs WHERE automation_id = ? AND run_no = ?", id, n)[0];
    const pidA = a.server.pid;
    await a.say(parent, call("task_run", { id })).catch(() => undefined); // A dies in this turn
    await waitUntil(() => run(1)?.status === "starting" && !isAlive(pidA), { timeoutMs: 20_000, what: "A died with run #1 starting" });
    const diedAt = Date.now();
    const ended = await waitUntil(() => { const r = run(1); return r.status !== "starting" && r; }, { timeoutMs: 20_000, what: "run #1 ended by B" });
    assert.ok(Date.now() - diedAt < LEASE_MS + 2000, `ended ${Date.now() - diedAt} ms after A died`);
    assert.equal(ended.status, "error");
    assert.match(ended.summary, new RegExp(`:${pidA}:`), "the error names the lost process");
    await b.say(parent, call("task_update", { id, enabled: true }));
    await waitUntil(() => queryDb(dbPath, "SELECT enabled FROM automations WHERE id = ?", id)[0]?.enabled === 1, { what: "resumed" });
    await b.say(parent, call("task_run", { id }));
    const second = await waitUntil(() => { const r = run(2); return r && r.status !== "starting" && r.status !== "running" && r; }, { timeoutMs: 30_000, what: "run #2 to end" });
    assert.equal(second.status, "completed", second.summary);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

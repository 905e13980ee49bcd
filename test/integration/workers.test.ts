/**
 * Children on other OpenCode servers: two plain `opencode serve` workers (own home and checkout,
 * the same mock model, basic auth on) beside the user's OpenCode with the plugin. Twelve children
 * with worker "auto" run 4 + 4 + 4; a result reaches its parent once; resume and cancel go to the
 * worker; a worker killed mid-run holds its children as unreachable, and they finish when it comes
 * back within the grace period, or settle as error after it; a wrong password is that worker's
 * error only.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { freePort, startOpencode, type OpencodeServer } from "../harness/opencode-server.ts";
import { startStack, call, toolOutputs, waitUntil, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { createRemoteHost, remoteClientFor } from "../../src/workers/remote-host.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import type { WorkerConfig } from "../../src/workers/worker-config.ts";
import { main } from "../../src/cli/main.ts";

const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;
const GRACE_S = 8;

describe("workers on real hosts", () => {
  let mock: MockModel;
  let stack: Stack;
  const workers: Record<string, { server: OpencodeServer; port: number; config: WorkerConfig }> = {};
  const dir = mkdtempSync(join(tmpdir(), "ocbt-workers-"));
  const dbPath = join(dir, "tasks.db");
  let parent: string;

  const startWorker = async (name: string, reuse?: OpencodeServer) => {
    const port = workers[name]?.port ?? (await freePort());
    const server = await startOpencode({
      model: mock.url, env: { OPENCODE_SERVER_PASSWORD: PASSWORD }, port, ...(reuse ? { homeDir: reuse.homeDir, projectDir: reuse.projectDir } : {}),
    });
    const config: WorkerConfig = { name, url: server.url, username: "opencode", passwordEnv: "TEST_WORKER_PASSWORD", directory: server.projectDir, capacity: 4 };
    workers[name] = { server, port, config };
  };
  /** The worker's OpenCode as a Host, to look at what happened there. */
  const on = (name: string) => createRemoteHost(workers[name]!.config, new FakeHost(new FakeClock()), remoteClientFor(workers[name]!.config, { TEST_WORKER_PASSWORD: PASSWORD }));
  const tasks = () => queryDb(dbPath, "SELECT id, description, worker, status, result, error FROM tasks ORDER BY created_at");
  const task = (id: string) => queryDb(dbPath, "SELECT id, worker, status, result, error FROM tasks WHERE id = ?", id)[0];
  const health = (name: string) => queryDb(dbPath, "SELECT * FROM worker_health WHERE name = ?", name)[0];
  /** From `session` (default: the fan-out parent); a parent that notices keep waking is best left to them. */
  const launch = async (args: Record<string, unknown>, session = parent) => {
    const before = (await toolOutputs(stack, session, "background_task")).length;
    await stack.say(session, call("background_task", { description: "work", agent: "general", ...args }));
    // A prompt to a parent that a notice has woken joins that turn: the call may come after say returns.
    const out = await waitUntil(async () => (await toolOutputs(stack, session, "background_task"))[before], { timeoutMs: 20_000, what: "background_task's answer" });
    const id = /task_id: (\S+)/.exec(out)?.[1];
    if (!id) throw new Error(out);
    return id;
  };
  /** The parent's notices of a task's end (an interruption note is not one). */
  const noticesOf = async (id: string, session = parent) => (await stack.notifications(session)).filter((n) => n.includes(`task_id="${id}"`) && !/status="(running|resumed)"/.test(n));

  before(async () => {
    mock = await startMockModel();
    await startWorker("box");
    await startWorker("cube");
    const bad: WorkerConfig = { ...workers.box!.config, name: "bad", passwordEnv: "WRONG_PASSWORD" };
    stack = await startStack({
      mock,
      env: { TEST_WORKER_PASSWORD: PASSWORD, WRONG_PASSWORD: "not-the-password" },
      pluginOptions: { dbPath, pollIntervalMs: 500, maxConcurrentPerModel: 4, workerGraceSeconds: GRACE_S, workers: [workers.box!.config, workers.cube!.config, bad] },
    });
    parent = await stack.newSession("fan out");
  });
  after(async () => {
    await stack?.stop().catch(() => undefined);
    for (const w of Object.values(workers)) await w.server.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a wrong password is a clear error for that worker only", async () => {
    const bad = await waitUntil(async () => (health("bad")?.state === "unauthorized" ? health("bad") : undefined), { timeoutMs: 15_000, what: "the bad worker's health" });
    assert.match(bad.error, /WRONG_PASSWORD/);
    assert.doesNotMatch(bad.error, /not-the-password/);
    await waitUntil(async () => health("box")?.state === "healthy" && health("cube")?.state === "healthy", { timeoutMs: 15_000, what: "box and cube healthy" });
    assert.match(await stack.server.logFile(), /Worker \\?"bad\\?" is unauthorized/);
    let out = "";
    await main(["workers", "--db", dbPath], { stdout: (t) => void (out += t), stderr: (t) => void (out += t), env: {}, now: () => Date.now() });
    assert.match(out, /box\s+127\.0\.0\.1:\d+\s+healthy/);
    assert.match(out, /bad\s+127\.0\.0\.1:\d+\s+unauthorized/);
  });

  it('twelve children with worker "auto": 4 here, 4 on box, 4 on cube; each result reaches the parent once', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => call("background_task", { description: `job ${i}`, prompt: `SLOW 3000\nREPLY result ${i}`, agent: "general", worker: "auto" }));
    await stack.say(parent, lines.join("\n"));
    const launched = tasks();
    assert.equal(launched.length, 12);
    const count = (w: string | null) => launched.filter((t) => t.worker === w).length;
    assert.deepEqual([count(null), count("box"), count("cube")], [4, 4, 4]);
    assert.ok(launched.every((t) => t.status === "running"), "none queued");
    const onBox = launched.filter((t) => t.worker === "box").map((t) => t.id);
    assert.ok(await on("box").sessionExists(onBox[0]!), "the child session lives on the worker");
    await waitUntil(async () => tasks().every((t) => t.status === "completed"), { timeoutMs: 40_000, what: "all twelve completed" });
    for (const t of tasks()) assert.equal(t.result, `result ${/job (\d+)/.exec(t.description)![1]}`);
    await waitUntil(async () => (await Promise.all(launched.map((t) => noticesOf(t.id)))).every((n) => n.length >= 1), { timeoutMs: 20_000, what: "every parent notice" });
    await new Promise((r) => setTimeout(r, 1500));
    for (const t of launched) assert.equal((await noticesOf(t.id)).length, 1, `one notice for ${t.id} (${t.worker ?? "local"})`);
    assert.match(await toolOutputsText("background_list", {}), /\(on worker box\)/);
  });

  async function toolOutputsText(tool: string, args: Record<string, unknown>, session = parent) {
    const before = (await toolOutputs(stack, session, tool)).length;
    await stack.say(session, call(tool, args));
    return waitUntil(async () => (await toolOutputs(stack, session, tool))[before], { timeoutMs: 20_000, what: `${tool}'s answer` });
  }

  it("fork onto a worker copies the parent's messages there; expect.files is checked in the worker's checkout", async () => {
    const own = await stack.newSession("fork and evidence");
    await stack.say(own, "Remember the code word PELICAN-42.\nREPLY noted");
    const forked = await launch({ prompt: "REPLY forked answer", worker: "box", fork: true }, own);
    await waitUntil(async () => task(forked).status === "completed", { timeoutMs: 20_000, what: "the forked child" });
    const [copy] = await on("box").recentMessages(forked, 10);
    assert.match(copy!.text, /copied from the parent session[\s\S]*PELICAN-42[\s\S]*noted/);
    assert.equal(task(forked).result, "forked answer");

    const writes = call("write", { filePath: "worker-report.md", content: "# Made on the worker\n" });
    const ok = await launch({ prompt: writes, worker: "cube", expect: { files: ["worker-report.md"] } }, own);
    await waitUntil(async () => task(ok).status === "completed", { timeoutMs: 20_000, what: "the writing child" });
    assert.ok(!existsSync(join(stack.server.projectDir, "worker-report.md")), "the file is on the worker, not here");
    const missing = await launch({ prompt: "REPLY I wrote nothing", worker: "cube", expect: { files: ["never-written.md"] } }, own);
    // Each settled child wakes `own` with a notice; a call said while one is arriving can lose its turn
    // to it (the mock model answers the last user message), so ask once all three were told.
    await waitUntil(async () => (await Promise.all([forked, ok, missing].map((id) => noticesOf(id, own)))).every((n) => n.length >= 1), { timeoutMs: 20_000, what: "the three notices" });
    assert.match(await toolOutputsText("background_output", { task_id: missing }, own), /never-written\.md does not exist/);
  });

  it("resume and cancel of a task on a worker go to that worker", async () => {
    const done = tasks().find((t) => t.worker === "cube")!;
    await toolOutputsText("background_task", { description: "more", prompt: "REPLY resumed on cube", agent: "general", resume: done.id }, await stack.newSession("resume"));
    await waitUntil(async () => task(done.id).status === "completed" && task(done.id).result === "resumed on cube", { timeoutMs: 20_000, what: "the resumed run" });
    const onCube = await on("cube").recentMessages(done.id, 2);
    assert.equal(onCube.at(-1)!.text, "resumed on cube");
    const own = await stack.newSession("cancel");
    const long = await launch({ prompt: "SLOW 60000\nREPLY never", worker: "box" }, own);
    await waitUntil(async () => (await on("box").statuses())[long] === "busy", { timeoutMs: 15_000, what: "the long child busy on box" });
    assert.match(await toolOutputsText("background_cancel", { task_id: long }, own), /cancel/i);
    assert.equal(task(long).status, "cancelled");
    await waitUntil(async () => (await on("box").statuses())[long] === undefined, { timeoutMs: 10_000, what: "the child aborted on box" });
  });

  it("SIGKILL mid-run: its children show unreachable; restarted within the grace period they finish", async () => {
    const own = await stack.newSession("held");
    const id = await launch({ prompt: "SLOW 4000\nREPLY survived", worker: "box" }, own);
    await waitUntil(async () => (await on("box").statuses())[id] === "busy", { timeoutMs: 15_000, what: "busy on box" });
    const killed = workers.box!.server;
    await killed.kill();
    await waitUntil(async () => /unreachable/.test(await toolOutputsText("background_list", {}, own)), { timeoutMs: 10_000, intervalMs: 1000, what: "shown unreachable" });
    assert.equal(task(id).status, "running", "held, not failed");
    await startWorker("box", killed);
    await waitUntil(async () => task(id).status === "completed", { timeoutMs: 30_000, what: "the held child finishing after the worker came back" });
    await waitUntil(async () => (await noticesOf(id, own)).length >= 1, { timeoutMs: 10_000, what: "the parent told" });
    assert.equal((await noticesOf(id, own)).length, 1);
  });

  it("SIGKILL and no return: its children settle as error after the grace period, the parent told once", async () => {
    const own = await stack.newSession("lost");
    const id = await launch({ prompt: "SLOW 60000\nREPLY never", worker: "cube" }, own);
    await waitUntil(async () => (await on("cube").statuses())[id] === "busy", { timeoutMs: 15_000, what: "busy on cube" });
    const killedAt = Date.now();
    await workers.cube!.server.kill();
    const failed = await waitUntil(async () => (task(id).status === "error" ? task(id) : undefined), { timeoutMs: (GRACE_S + 20) * 1000, what: "the error after the grace period" });
    assert.ok(Date.now() - killedAt >= GRACE_S * 1000, "not before the grace period");
    assert.match(failed.error, new RegExp(`Worker "cube" was unreachable since .* for more than ${GRACE_S} s \\(workerGraceSeconds\\)`));
    await waitUntil(async () => (await noticesOf(id, own)).length >= 1, { timeoutMs: 10_000, what: "the parent told" });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await noticesOf(id, own)).length, 1);
  });
});

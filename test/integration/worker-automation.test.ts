/**
 * An automation whose runs go to a worker (another `opencode serve`) with session "continue": the
 * automation layer asks the worker, through the routed host, whether the earlier run's session
 * exists, so the second run continues it (the local server does not know it: asked there, every
 * run started a new session).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { startOpencode, type OpencodeServer } from "../harness/opencode-server.ts";
import { startStack, call, toolOutputs, waitUntil, queryDb, type Stack } from "../harness/plugin-stack.ts";
import type { WorkerConfig } from "../../src/workers/worker-config.ts";

const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;

describe("a continued automation on a worker", () => {
  let mock: MockModel;
  let worker: OpencodeServer;
  let stack: Stack;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-worker-auto-"));
  const dbPath = join(dir, "tasks.db");

  before(async () => {
    mock = await startMockModel();
    worker = await startOpencode({ model: mock.url, env: { OPENCODE_SERVER_PASSWORD: PASSWORD } });
    const config: WorkerConfig = { name: "box", url: worker.url, username: "opencode", passwordEnv: "TEST_WORKER_PASSWORD", directory: worker.projectDir, capacity: 2 };
    stack = await startStack({
      mock, env: { TEST_WORKER_PASSWORD: PASSWORD },
      pluginOptions: { dbPath, pollIntervalMs: 500, workers: [config] },
      config: { permission: { background_automation: "allow" } },
    });
  });
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await worker?.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the second run continues the worker session of the first", { timeout: 120_000 }, async () => {
    // A loaded machine may miss the first health check's 3 s: the runs wait for the worker to be known healthy.
    await waitUntil(() => queryDb(dbPath, "SELECT state FROM worker_health WHERE name = 'box'")[0]?.state === "healthy", { timeoutMs: 60_000, what: "worker box healthy" });
    const parent = await stack.newSession("parent: worker automation");
    await stack.say(parent, call("task_create", { title: "on the box", prompt: "Report the build.", session: "continue", worker: "box", notify: "never" }));
    const created = (await toolOutputs(stack, parent, "task_create"))[0] ?? "";
    const id = /Created automation (au\w+)/.exec(created)?.[1];
    assert.ok(id, `task_create created the automation: ${created}`);
    const run = (n: number) => queryDb(dbPath, "SELECT status, summary, task_id FROM automation_runs WHERE automation_id = ? AND run_no = ?", id, n)[0];
    for (const n of [1, 2]) {
      await stack.say(parent, call("task_run", { id }));
      const ended = await waitUntil(() => { const r = run(n); return r && r.status !== "running" && r.status !== "starting" && r; }, { timeoutMs: 60_000, what: `run #${n} to end` })
        .catch((error) => { throw new Error(`${error.message}: run ${JSON.stringify(run(n))}, tasks ${JSON.stringify(queryDb(dbPath, "SELECT id, worker, status, error FROM tasks"))}`); });
      assert.equal(ended.status, "completed", `run #${n}: ${ended.summary}`);
    }
    const [first, second] = [run(1), run(2)];
    const worker1 = queryDb(dbPath, "SELECT worker FROM tasks WHERE id = ?", first.task_id)[0];
    assert.equal(worker1?.worker, "box", "the run's child ran on the worker");
    assert.equal(second.task_id, first.task_id, "one worker session for both runs");
  });
});

import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { startStack, call, toolOutputs, waitUntil, type Stack, queryDb } from "../harness/plugin-stack.ts";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { inotifyInodes } from "../harness/inotify.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";
import { MAX_SLEEP_MS } from "../../src/automations/automation-scheduler.ts";
import { TICK_MS } from "../../src/triggers/event-sources.ts";

/** Debounce of the watch trigger plus a margin: a second run would have started by then. */
const QUIET_MS = 2000;

/**
 * Two `opencode serve` processes on one project and one database, both up before the automations
 * exist: each event trigger's source runs in one of them (its lease), every event fires one run,
 * and when the lease holder is SIGKILLed the other process takes the sources over.
 */
describe("event triggers with two servers on one database", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-shared-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (reuse?: Stack) => {
    const stack = await startStack({
      mock, pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow", bash: "allow" } },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  type RunRow = { run_no: number | null; status: string; fired_by: string; event_summary: string | null };
  const runs = (automationId: string) =>
    query<RunRow>("SELECT run_no, status, fired_by, event_summary FROM automation_runs WHERE automation_id = ? ORDER BY id", automationId);
  const completed = (automationId: string, count: number) =>
    waitUntil(() => runs(automationId).filter((r) => r.status === "completed").length === count, { timeoutMs: 20_000, what: `${count} completed runs` });
  const leases = () => query<{ trigger_id: string; holder: string }>("SELECT trigger_id, holder FROM trigger_leases ORDER BY trigger_id");
  const triggerOf = (automationId: string) => query<{ id: string }>("SELECT id FROM automation_triggers WHERE automation_id = ?", automationId)[0]!.id;
  // A holder is host:pid:nonce (core/claims.ts), the one identity every claim uses.
  const pidOf = (holder: string) => Number(/^.+:(\d+):[0-9a-f]{8}$/.exec(holder)?.[1]);

  const create = async (stack: Stack, parent: string, args: Record<string, unknown>) => {
    await stack.say(parent, call("task_create", { notify: "never", ...args }));
    const out = (await toolOutputs(stack, parent, "task_create")).at(-1) ?? "";
    const id = /Created automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, `task_create answered: ${out}`);
    return id;
  };

  it("one source per trigger, one run per event, and a takeover when the holder dies", async () => {
    mock = await startMockModel();
    const a = await start();
    const project = a.server.projectDir;
    mkdirSync(join(project, "src"));
    const srcInode = statSync(join(project, "src")).ino;
    const watchesSrc = (stack: Stack) => inotifyInodes(stack.server.pid).has(srcInode);
    writeFileSync(join(project, "status.txt"), "green\n");
    const b = await start(a);
    const bReadyAt = Date.now();

    const parent = await a.newSession("parent: shared");
    const onSave = await create(a, parent, { title: "on save", prompt: "REPLY saw the save", triggers: [{ watch: ["src/"], debounce: "500ms" }] });
    const onStatus = await create(a, parent, { title: "on status", prompt: "REPLY saw the status", triggers: [{ command: "cat status.txt", every: "1s" }] });
    const watchTrigger = triggerOf(onSave);
    const commandTrigger = triggerOf(onStatus);

    // The creating process takes both leases; the command's first check records its baseline.
    await waitUntil(() => leases().length === 2, { what: "two leases" });
    assert.deepEqual(leases().map((l) => pidOf(l.holder)), [a.server.pid, a.server.pid]);
    assert.deepEqual(leases().map((l) => l.trigger_id), [commandTrigger, watchTrigger].sort());
    await waitUntil(() => query("SELECT 1 FROM automation_triggers WHERE id = ? AND state IS NOT NULL", commandTrigger).length === 1, { what: "command baseline" });
    await waitUntil(() => watchesSrc(a), { what: "A watches src/" });
    // B learns of the new triggers at its scheduler's next wake (at most a minute after its start);
    // from then on it asks for the leases every tick, and must not get them while A lives.
    const wakeAt = bReadyAt + MAX_SLEEP_MS + 2 * TICK_MS;
    if (Date.now() < wakeAt) await sleep(wakeAt - Date.now());
    assert.deepEqual(leases().map((l) => pidOf(l.holder)), [a.server.pid, a.server.pid], "a live holder keeps its leases");
    assert.equal(watchesSrc(b), false, "one watcher per trigger: B watches nothing while A holds the lease");

    // Each save: one run across both servers.
    writeFileSync(join(project, "src/a.ts"), "export const a = 1;\n");
    await completed(onSave, 1);
    writeFileSync(join(project, "src/a.ts"), "export const a = 2;\n");
    await completed(onSave, 2);
    // A command output change: one run (both processes running the command would fire twice).
    writeFileSync(join(project, "status.txt"), "red\n");
    await completed(onStatus, 1);
    await sleep(QUIET_MS);
    assert.deepEqual(leases().map((l) => pidOf(l.holder)), [a.server.pid, a.server.pid]);
    assert.deepEqual(runs(onSave), [
      { run_no: 1, status: "completed", fired_by: "watch", event_summary: "src/a.ts added" },
      { run_no: 2, status: "completed", fired_by: "watch", event_summary: "src/a.ts changed" },
    ]);
    assert.deepEqual(runs(onStatus), [{ run_no: 1, status: "completed", fired_by: "command", event_summary: "`cat status.txt` output changed" }]);

    await a.server.kill();
    a.events.close();
    const killedAt = Date.now();
    await waitUntil(() => leases().every((l) => pidOf(l.holder) === b.server.pid), { timeoutMs: 15_000, what: "B holds every lease" });
    const takeoverMs = Date.now() - killedAt;
    assert.ok(takeoverMs < 6000, `takeover took ${takeoverMs} ms`);
    assert.equal(leases().length, 2);
    await waitUntil(() => watchesSrc(b), { what: "B watches src/" });

    // After the takeover: a save and a command change each fire one run, in the surviving server.
    writeFileSync(join(project, "src/b.ts"), "export const b = 1;\n");
    await completed(onSave, 3);
    writeFileSync(join(project, "status.txt"), "green again\n");
    await completed(onStatus, 2);
    await sleep(QUIET_MS);
    assert.deepEqual(runs(onSave).map((r) => [r.run_no, r.status, r.event_summary]), [
      [1, "completed", "src/a.ts added"], [2, "completed", "src/a.ts changed"], [3, "completed", "src/b.ts added"],
    ]);
    assert.deepEqual(runs(onStatus).map((r) => [r.run_no, r.status]), [[1, "completed"], [2, "completed"]]);
    console.log(`takeover after SIGKILL: ${takeoverMs} ms`);
  });
});

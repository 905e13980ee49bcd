import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { main } from "../../src/cli/main.ts";

/**
 * History bounded per automation on a real OpenCode: a steps-only automation runs 14 times with
 * option historyRuns 10; the retention pass of the restarted process folds the 4 oldest quiet runs
 * into one day row, and the CLI's `runs` shows that day.
 */
describe("run history on the real host", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-history-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (reuse?: Stack) => {
    mock ??= await startMockModel();
    const stack = await startStack({
      mock, pluginOptions: { dbPath, historyRuns: 10 }, config: { permission: { background_automation: "allow", bash: "allow" } },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  it("keeps the newest historyRuns runs whole and folds the older quiet ones into a day the CLI shows", async () => {
    const first = await start();
    const parent = await first.newSession("history");
    await first.say(parent, call("task_create", { title: "ping", steps: [{ name: "ok", run: "true" }], triggers: [{ every: "1s" }], max_runs: 14, notify: "never" }));
    const id = /automation (au\w+)/.exec((await toolOutputs(first, parent, "task_create"))[0] ?? "")?.[1];
    assert.ok(id, "task_create made the automation");
    const completed = () => queryDb<{ n: number }>(dbPath, "SELECT count(*) AS n FROM automation_runs WHERE automation_id = ? AND status = 'completed'", id)[0]!.n;
    await waitUntil(() => completed() >= 14 || undefined, { timeoutMs: 60_000, intervalMs: 250, what: "14 completed runs" });
    assert.equal(queryDb(dbPath, "SELECT * FROM automation_run_days").length, 0, "nothing folded while the process runs (the next pass is 5 minutes off)");
    await first.server.kill();
    first.events.close();

    await start(first);
    const day = await waitUntil(() => queryDb<{ completed: number; skipped: number; missed: number }>(dbPath, "SELECT * FROM automation_run_days WHERE automation_id = ?", id)[0], {
      timeoutMs: 30_000, intervalMs: 250, what: "a folded day",
    });
    const rows = queryDb<{ id: number }>(dbPath, "SELECT id FROM automation_runs WHERE automation_id = ? ORDER BY id", id);
    assert.equal(rows.length, 10, "the newest 10 rows stay");
    assert.equal(day.completed, 14 - completed(), "every completed run is either kept or counted in the day, once");

    let out = "";
    assert.equal(main(["runs", id, "--db", dbPath], { stdout: (t: string) => void (out += t), stderr: () => {}, env: {} } as never), 0);
    assert.match(out, new RegExp(`^- \\d{1,2} [A-Z][a-z]{2}( \\d{4})?: ${day.completed + day.skipped + day.missed} quiet runs? \\(${day.completed} ok[^)]*\\), \\$0\\.00$`, "m"));
  });
});

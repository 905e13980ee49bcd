import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../src/cli/main.ts";
import type { Spend } from "../../src/cost/spend.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { SpendRepository } from "../../src/store/spend-repository.ts";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { runningTask } from "../store/task-fixtures.ts";

const DAY = 86_400_000;
const spend = (costUsd: number, input: number, output = 0): Spend =>
  ({ tokens: { input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd, requests: 1 });

describe("CLI: costs, and spend in list, show and runs", () => {
  const db = tempDb();
  after(() => db.cleanup());
  let now = 0;
  let nightly = "";
  let runTasks: string[] = [];

  function run(argv: string[]) {
    let stdout = "";
    let stderr = "";
    const code = main([...argv, "--db", db.path], { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), env: {}, now: () => now });
    return { code: code as number, stdout, stderr };
  }
  const json = (argv: string[]) => {
    const out = run([...argv, "--json"]);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout);
  };

  before(async () => {
    // Two runs of a real automation, through the real store and run machinery.
    const f = automationFixture(db.path);
    f.host.setActivity(PARENT, "idle");
    f.runs.start();
    nightly = f.create({ title: "nightly check", notify: "never" }, [{ every: "1m" }]).id;
    for (let i = 0; i < 2; i++) {
      await f.clock.advance(60_000);
      f.host.finishRun(f.children()[i]!, `run ${i + 1} done`);
      await f.flush();
    }
    now = f.clock.now() + 1_000;
    f.close();

    const store = SqliteTaskStore.open({ path: db.path, projectId: "proj" });
    const rows = new SpendRepository(store.db, "proj");
    runTasks = f.children();
    assert.equal(runTasks.length, 2);
    // Run 1's task launched a child (its spend belongs to the run); a direct task with a child of
    // its own on another model; an old direct task outside the default week.
    store.save(runningTask("ses_runchild", { parentSessionID: runTasks[0]!, createdAt: now - 500 }));
    store.save(runningTask("ses_direct", { parentSessionID: PARENT, createdAt: now - 2 * DAY }));
    store.save(runningTask("ses_directkid", { parentSessionID: "ses_direct", createdAt: now - DAY, model: { providerID: "mock", modelID: "cheap" } }));
    store.save(runningTask("ses_old", { parentSessionID: PARENT, createdAt: now - 10 * DAY }));
    rows.put(runTasks[0]!, "msg_a", spend(0.25, 10_000, 2_000));
    rows.put(runTasks[0]!, "msg_b", spend(0.125, 3_000));
    rows.put("ses_runchild", "msg_c", spend(0.5, 20_000));
    rows.put(runTasks[1]!, "msg_d", spend(0.0625, 1_000));
    rows.put("ses_direct", "msg_e", spend(0.03125, 500));
    rows.put("ses_directkid", "msg_f", spend(0, 4_000));
    rows.put("ses_old", "msg_g", spend(2, 100_000));
    store.close();
  });

  it("costs --by automation --json: the automation's sum is its runs' spends, direct tasks apart, most first", () => {
    const runs = json(["runs", nightly]).runs as Array<{ taskId: string; spend?: Spend }>;
    const runSum = runs.reduce((sum, r) => sum + (r.spend?.costUsd ?? 0), 0);
    assert.equal(runSum, 0.25 + 0.125 + 0.5 + 0.0625, "run 1 includes the child it launched");
    const report = json(["costs", "--by", "automation"]);
    assert.equal(report.by, "automation");
    assert.deepEqual(report.rows.map((r: { key: string | null; label: string; costUsd: number; requests: number; tasks: number }) => [r.key, r.label, r.costUsd, r.requests, r.tasks]), [
      [nightly, `nightly check (${nightly})`, runSum, 4, 2],
      [null, "(direct tasks)", 0.03125, 2, 1],
    ]);
    assert.equal(report.total.costUsd, runSum + 0.03125);
    assert.equal(report.total.tokens, 12_000 + 3_000 + 20_000 + 1_000 + 500 + 4_000);
  });

  it("--since leaves out older launches; the default is a week", () => {
    assert.equal(json(["costs"]).total.costUsd, 0.96875);
    assert.equal(json(["costs", "--since", "30d"]).rows[0].costUsd, 2.03125, "the old direct task now counts, and costs the most");
    const day = json(["costs", "--since", "24h"]);
    assert.deepEqual(day.rows.map((r: { label: string }) => r.label), [`nightly check (${nightly})`], "a direct task from 2 days ago counts on its launch day, with its child");
  });

  it("--by model uses each task's model; --by day the launch day; the table ends with the total", () => {
    const byModel = json(["costs", "--by", "model"]);
    assert.deepEqual(byModel.rows.map((r: { key: string; tokens: number }) => [r.key, r.tokens]), [["anthropic/claude-sonnet", 20_500], ["mock/mock-model", 16_000], ["mock/cheap", 4_000]]);
    assert.equal(json(["costs", "--by", "day"]).rows.length, 2);
    const table = run(["costs"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^AUTOMATION +SPENT +REQUESTS +TASKS$/m);
    assert.match(table.stdout, /^nightly check \(\S+\) +\$0\.938 · 36\.0k tok +4 +2$/m);
    assert.match(table.stdout, /^\(direct tasks\) +\$0\.031 · 4\.5k tok +2 +1$/m);
    assert.match(table.stdout, /^Total since .*: \$0\.969 · 40\.5k tok \(6 requests\)$/m);
  });

  it("list, show and runs show each task's spend with its descendants in the one format", () => {
    const list = run(["list"]);
    assert.match(list.stdout, new RegExp(`^${runTasks[0]} .* \\$0\\.875 · 35\\.0k tok `, "m"));
    assert.match(list.stdout, /^ses_direct .* \$0\.031 · 4\.5k tok /m);
    assert.match(list.stdout, /^ses_directkid .* 4\.0k tok /m, "a model without a price shows tokens only");
    assert.match(run(["show", "ses_direct"]).stdout, /^ {2}Spent {8}\$0\.031 · 4\.5k tok \(with the tasks it launched\)$/m);
    assert.equal(json(["show", "ses_direct"]).spend.requests, 2);
    assert.match(run(["runs", nightly]).stdout, /#1 +completed +\S+ +\$0\.875 · 35\.0k tok /);
  });

  it("refuses a bad --by or --since with the fix, exit 2", () => {
    const by = run(["costs", "--by", "agent"]);
    assert.equal(by.code, 2);
    assert.match(by.stderr, /--by agent is not a grouping; use --by automation, --by model or --by day\./);
    const since = run(["costs", "--since", "1w"]);
    assert.equal(since.code, 2);
    assert.match(since.stderr, /--since 1w is not a duration; give hours or days, e.g\. --since 24h, 7d or 30d\./);
    assert.equal(run(["list", "--by", "model"]).code, 2);
  });
});

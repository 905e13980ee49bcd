import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, startedAutomations, tempDb, PARENT } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { runNotificationText } from "../../src/automations/automation-text.ts";
import { SpendRepository } from "../../src/store/spend-repository.ts";
import type { SpendPort } from "../../src/automations/automation-context.ts";
import { startOfDayIn, startOfWeekIn, dayKey } from "../../src/automations/zoned-day.ts";
import type { Spend } from "../../src/cost/spend.ts";
import type { SqliteDatabase } from "../../src/store/sqlite-driver.ts";

// The fake clock starts at 2023-11-14T22:13:20Z: 23:13:20 in Paris (CET), midnight there is 46 min 40 s away.
const PARIS_EVERY_10S = { cron: "*/10 * * * * *", timezone: "Europe/Paris" };
const PARIS_MIDNIGHT = Date.parse("2023-11-14T23:00:00Z");

const spendOf = (costUsd: number, tokens = 1000): Spend => ({
  tokens: { input: tokens, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd, requests: 1,
});

type F = ReturnType<typeof automationFixture>;

/** The task_spend rows of the fixture's database, as the plugin's spend recorder writes them. */
const spendRows = (f: F) => new SpendRepository((f.store as unknown as { db: SqliteDatabase }).db, "proj");

/** The running children of the parent: each model request they "made" is written as the host's events would. */
function runningChildren(f: F): string[] {
  return f.children().filter((id) => ["running", "resumed"].includes(f.manager.get(id)!.status));
}

async function spendAndFinish(f: F, spend: SpendRepository, usd: number) {
  for (const id of runningChildren(f)) {
    spend.put(id, `msg_${id}`, spendOf(usd));
    f.host.finishRun(id, "done");
  }
  await f.flush();
  f.host.setActivity(PARENT, "idle");
  await f.flush();
}

const budgetNotices = (f: F) => f.host.promptsTo(PARENT).filter((p) => p.text.includes("<automation-budget"));
/** Oldest first; a row that counts several skipped firings ends with ` x<count>`. */
const rowsOf = (f: F, id: string) => f.autoStore.runs(id, 500).map((r) => `${r.status}${r.skipReason ? `:${r.skipReason}` : ""}${(r.skipCount ?? 1) > 1 ? ` x${r.skipCount}` : ""}`).reverse();

function tool(f: F) {
  const tools = automationTools(f.automations, () => {});
  return async (name: string, args: unknown) => String(await tools[name]!.execute(args as never, { sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal } as never));
}

describe("automation budget: the tool arguments", () => {
  it("bad values are refused with the fix and nothing is stored; good ones are stored, shown, changed and removed", async () => {
    const f = startedAutomations();
    const call = tool(f);
    for (const [budget, expected] of [
      [{ usd_per_day: -1 }, /budget\.usd_per_day must be a number above 0, got -1/],
      [{ usd: 1 }, /budget takes usd_per_run, usd_per_day, tokens_per_run, tokens_per_day, not "usd"/],
      [{ tokens_per_run: 1.5 }, /budget\.tokens_per_run must be a whole number of tokens/],
      [{ usd_per_run: "1" }, /budget\.usd_per_run must be a number above 0, got "1"/],
      [[1], /budget must be an object/],
    ] as const) {
      const out = await call("task_create", { title: "t", prompt: "p", budget });
      assert.match(out, expected);
      assert.match(out, /Nothing was stored/);
    }
    assert.equal(f.catalog.all().length, 0);
    const created = await call("task_create", { title: "digest", prompt: "p", triggers: [PARIS_EVERY_10S], budget: { usd_per_run: 0.5, usd_per_day: 2, tokens_per_day: 300000 } });
    const id = /Created automation (\S+)/.exec(created)![1]!;
    assert.deepEqual(f.catalog.get(id)!.budget, { usdPerRun: 0.5, usdPerDay: 2, tokensPerDay: 300000 });
    const read = await call("task_read", { id });
    assert.match(read, /budget: \$0\.500 per run, \$2\.00 per day, 300\.0k tokens per day \(days in Europe\/Paris\)/);
    assert.match(read, /spent: nothing yet/);
    assert.match(await call("task_update", { id, budget: { usd_per_day: 0 } }), /budget\.usd_per_day must be a number above 0/);
    assert.deepEqual(f.catalog.get(id)!.budget, { usdPerRun: 0.5, usdPerDay: 2, tokensPerDay: 300000 }, "a refused update changes nothing");
    await call("task_update", { id, budget: { tokens_per_run: 20000 } });
    assert.deepEqual(f.catalog.get(id)!.budget, { tokensPerRun: 20000 });
    await call("task_update", { id, budget: {} });
    assert.equal(f.catalog.get(id)!.budget, undefined);
    assert.doesNotMatch(await call("task_read", { id }), /budget:/);
  });
});

describe("automation budget: per run", () => {
  it("each run's task is launched with the per-run budget; a continued run's counts from what its session had spent", async () => {
    const f = startedAutomations();
    const spend = spendRows(f);
    const fresh = f.create({ budget: { usdPerRun: 0.5, tokensPerRun: 20000 } });
    await f.runs.runNow(fresh.id);
    const first = runningChildren(f)[0]!;
    assert.deepEqual(f.manager.get(first)!.budget, { usd: 0.5, tokens: 20000 });
    await spendAndFinish(f, spend, 0.25);
    const continued = f.create({ title: "cont", sessionMode: "continue", budget: { usdPerRun: 0.5 } });
    await f.runs.runNow(continued.id);
    const child = runningChildren(f)[0]!;
    await spendAndFinish(f, spend, 0.25);
    await f.runs.runNow(continued.id);
    assert.deepEqual(f.manager.get(child)!.budget, { usd: 0.75 }, "0.25 spent before the run, plus 0.5 for it");
    const second = f.autoStore.runs(continued.id, 1)[0]!;
    assert.equal(second.spentBefore?.costUsd, 0.25);
    spend.put(child, "msg_second", spendOf(0.1));
    assert.match(await tool(f)("task_read", { id: continued.id }), /spent: today \$0\.350 · 2\.0k tok; this week \$0\.350 · 2\.0k tok; last run #2 \$0\.100 · 1\.0k tok/);
    f.host.finishRun(child, "second"); // run #2 ends (its spend is in already)
    await f.flush();
    f.clock.jump(86_400_000); // the next day: the session's earlier spend is not today's
    await f.runs.runNow(continued.id);
    spend.put(child, "msg_third", spendOf(0.05));
    assert.match(await tool(f)("task_read", { id: continued.id }), /spent: today \$0\.050 · 1\.0k tok; .*last run #3 \$0\.050 · 1\.0k tok/);
  });
});

describe("automation budget: a run stopped at its per-run budget", () => {
  it("its notice hands back the last answer its child had, as a task's does", () => {
    const f = startedAutomations();
    const a = f.create({ budget: { usdPerRun: 0.5 } });
    const run = { id: 1, automationId: a.id, runNo: 3, firedBy: "manual", status: "error", createdAt: 0 } as const;
    const text = runNotificationText(a, run, { status: "error", error: "budget_exceeded: spent $0.52 of $0.50 (112.0k tokens, 9 requests)", result: "found 3 of 5 flaky tests" }, 1000);
    assert.match(text, /status="error">\nAutomation "check ci" run #3 \(run now \(task_run\)\) error:\nError: budget_exceeded: spent \$0\.52 of \$0\.50 \(112\.0k tokens, 9 requests\)\nLast answer:\nfound 3 of 5 flaky tests\n/);
    assert.doesNotMatch(runNotificationText(a, run, { status: "error", error: "boom", result: "partial" }, 1000), /Last answer/);
  });
});

describe("automation budget: per day", () => {
  it("past usd_per_day, firings are skipped with the reason, the owner is told once, and past midnight in its zone it fires again", async () => {
    const f = startedAutomations();
    const spend = spendRows(f);
    const a = f.create({ budget: { usdPerDay: 0.05 } }, [PARIS_EVERY_10S]);
    await f.clock.advance(10_000);
    await spendAndFinish(f, spend, 0.03);
    await f.clock.advance(10_000);
    await spendAndFinish(f, spend, 0.03); // 0.06 > 0.05
    await f.clock.advance(30_000);
    assert.deepEqual(rowsOf(f, a.id), ["completed", "completed", "skipped:daily budget reached ($0.060 of $0.050) x3"], "three firings, one row");
    assert.equal(f.children().length, 2);
    const told = budgetNotices(f);
    assert.equal(told.length, 1, "told once");
    assert.match(told[0]!.text, /daily budget reached \(\$0\.060 of \$0\.050\)\. Its firings are skipped \(and recorded\) until 2023-11-14T23:00:00Z \(midnight, Europe\/Paris\)/);
    assert.equal(told[0]!.noReply, true, "no model turn for it");
    const ran = await tool(f)("task_run", { id: a.id });
    assert.match(ran, /^Not run: daily budget reached \(\$0\.060 of \$0\.050\)/);
    // The trigger's three firings are one row; task_run's firing (no trigger) is a streak of its own.
    const read = await tool(f)("task_read", { id: a.id });
    assert.match(read, /skipped 3 times until [\dT:-]+Z \(daily budget reached \(\$0\.060 of \$0\.050\)\) cron /);
    assert.match(read, /skipped \(daily budget reached \(\$0\.060 of \$0\.050\)\) run now \(task_run\)/);
    f.clock.jump(PARIS_MIDNIGHT - 20_000 - f.clock.now());
    await f.clock.advance(20_000);
    assert.equal(f.children().length, 3, "a new day in Paris: it fires again");
    assert.equal(budgetNotices(f).length, 1);
    assert.match(await tool(f)("task_read", { id: a.id }), /spent: today nothing; this week \$0\.060 · 2\.0k tok/);
  });

  it("tokens_per_day says tokens; a day reached by tokens is told the same way", async () => {
    const f = startedAutomations();
    const spend = spendRows(f);
    const a = f.create({ budget: { tokensPerDay: 1500 } }, [PARIS_EVERY_10S]);
    await f.clock.advance(10_000);
    await spendAndFinish(f, spend, 0);
    await f.clock.advance(10_000);
    await spendAndFinish(f, spend, 0);
    await f.clock.advance(10_000);
    assert.equal(rowsOf(f, a.id).at(-1), "skipped:daily budget reached (2.0k of 1.5k tokens)");
    assert.equal(budgetNotices(f).length, 1);
  });

  it("a queued run that comes up after the budget is passed is skipped, not started", async () => {
    const f = startedAutomations();
    const spend = spendRows(f);
    const a = f.create({ overlap: "queue", budget: { usdPerDay: 0.05 } }, [PARIS_EVERY_10S]);
    await f.clock.advance(20_000); // one running, one waiting
    assert.deepEqual(rowsOf(f, a.id), ["running", "waiting"]);
    await spendAndFinish(f, spend, 0.1);
    assert.deepEqual(rowsOf(f, a.id), ["completed", "skipped:daily budget reached ($0.100 of $0.050)"]);
    assert.equal(f.children().length, 1);
    assert.equal(budgetNotices(f).length, 1);
  });
});

describe("automation budget: the machine's dailyBudgetUsd", () => {
  it("reached: firings are skipped naming the option, told once; a run of steps only is never skipped", async () => {
    const db = tempDb();
    let spentUsd = 0;
    const port: SpendPort = { flush: () => {}, machineToday: (now) => ({ limitUsd: 1, spentUsd, reached: spentUsd >= 1, since: now - 1 }) };
    const f = automationFixture(db.path, {}, { spend: port });
    after(() => { f.close(); db.cleanup(); });
    f.host.setActivity(PARENT, "idle");
    f.runs.start();
    const model = f.create({}, [PARIS_EVERY_10S]);
    const steps = f.create({ title: "lint", prompt: "", steps: [{ name: "ok", run: "true", timeoutMs: 60_000 }], budget: { usdPerDay: 0.01 } }, [{ every: "10s" }]);
    spentUsd = 1.5;
    await f.clock.advance(10_000);
    await f.clock.advance(10_000);
    assert.deepEqual(rowsOf(f, model.id), ["skipped:daily budget reached ($1.50 of $1.00 for all background work today, option dailyBudgetUsd) x2"]);
    assert.equal(f.children().length, 0);
    assert.ok(f.autoStore.runs(steps.id, 10).every((r) => !r.skipReason?.startsWith("daily budget")), "steps only: never skipped for a budget");
    assert.ok(f.autoStore.runs(steps.id, 10).some((r) => r.runNo !== undefined), "the steps run started");
    const told = budgetNotices(f);
    assert.equal(told.length, 1);
    assert.match(told[0]!.text, /raise the option dailyBudgetUsd/);
  });
});

describe("automation budget: two processes on one database", () => {
  it("both see one spend: the firing each claims is skipped there, and the owner is told once in all", async () => {
    const db = tempDb();
    const one = automationFixture(db.path);
    const two = automationFixture(db.path);
    after(() => { one.close(); two.close(); db.cleanup(); });
    for (const f of [one, two]) f.host.setActivity(PARENT, "idle");
    const spend = spendRows(one);
    const a = one.create({ budget: { usdPerDay: 0.05 } }, [PARIS_EVERY_10S]);
    one.runs.start();
    two.runs.start();
    await one.clock.advance(10_000);
    await two.clock.advance(10_000);
    assert.equal(one.children().length + two.children().length, 1, "the occurrence fired once");
    await spendAndFinish(one, spend, 0.06);
    await spendAndFinish(two, spend, 0.06);
    for (let i = 0; i < 3; i++) {
      await one.clock.advance(10_000);
      await two.clock.advance(10_000);
    }
    const rows = rowsOf(one, a.id);
    assert.deepEqual(rows.slice(1), ["skipped:daily budget reached ($0.060 of $0.050) x3"], "one row for the streak, whichever process skipped each firing");
    assert.equal(budgetNotices(one).length + budgetNotices(two).length, 1, "told once across both processes");
  });
});

describe("zoned days", () => {
  it("midnight, the next day and Monday in a zone, across daylight saving changes", () => {
    const paris = "Europe/Paris";
    assert.equal(new Date(startOfDayIn(Date.parse("2026-03-29T15:00:00Z"), paris)).toISOString(), "2026-03-28T23:00:00.000Z", "the day clocks go forward starts at +01:00");
    assert.equal(new Date(startOfDayIn(Date.parse("2026-10-25T23:30:00Z"), paris)).toISOString(), "2026-10-25T23:00:00.000Z", "23:30 UTC is already the 26th in Paris");
    assert.equal(new Date(startOfDayIn(Date.parse("2026-10-25T20:00:00Z"), paris)).toISOString(), "2026-10-24T22:00:00.000Z", "the day clocks go back starts at +02:00");
    assert.equal(new Date(startOfDayIn(Date.parse("2026-11-27T05:00:00Z"), "America/New_York")).toISOString(), "2026-11-27T05:00:00.000Z");
    assert.equal(new Date(startOfWeekIn(Date.parse("2026-11-27T12:00:00Z"), paris)).toISOString(), "2026-11-22T23:00:00.000Z", "Monday the 23rd, Paris");
    assert.equal(new Date(startOfWeekIn(Date.parse("2026-03-30T12:00:00Z"), paris)).toISOString(), "2026-03-29T22:00:00.000Z", "a Monday is its own week's start");
    assert.equal(dayKey(Date.parse("2026-11-26T23:30:00Z"), paris), "2026-11-27");
  });
});

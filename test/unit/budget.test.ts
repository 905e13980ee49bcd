import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { tempDb } from "../helpers/automation-fixture.ts";
import { Store } from "../../src/store/store.ts";
import { TaskSpend, type SpendRows } from "../../src/cost/task-spend.ts";
import { dailyBudgetState } from "../../src/cost/daily-budget.ts";
import { budgetExceededText } from "../../src/cost/budget-text.ts";
import { parseBudget } from "../../src/core/budget.ts";
import type { Options } from "../../src/options/options.ts";
import { parseOptions } from "../../src/options/options.ts";

/**
 * Budgets on the fake host: each child request is the host's three `message.updated` events
 * (zeros, then the final numbers twice) with a text part in between, as OpenCode sends them.
 */
function budgetFixture(overrides: Partial<Options> = {}, wrap: (rows: SpendRows) => SpendRows = (rows) => rows) {
  const db = tempDb();
  const store = Store.open({ path: db.path, projectId: "p" });
  const errors: string[] = [];
  let now = () => Date.now();
  const spend = new TaskSpend(wrap(store.spend), store.tasks, (m, e) => errors.push(`${m}: ${String(e)}`), {
    dailyBudgetUsd: overrides.dailyBudgetUsd ?? 0, now: () => now(),
  });
  const f = coreFixture(overrides, store.tasks, { spend });
  now = () => f.clock.now();
  after(() => {
    f.manager.dispose();
    store.close();
    db.cleanup();
  });
  let seq = 0;
  /** One model request of `taskId`'s child: `tokens` input tokens at `usd`, answering `text`. */
  const request = (taskId: string, tokens: number, usd = 0, text = `step ${seq + 1}`) => {
    const id = `msg_req${String(++seq).padStart(4, "0")}`;
    const at = f.clock.now();
    const base = { id, role: "assistant" as const, createdAt: at, toolCallsPending: true };
    const usage = (n: number, c: number) => ({ input: n, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, costUsd: c });
    f.host.emit({ type: "message", sessionID: taskId, message: { ...base, usage: usage(0, 0) } });
    f.host.emit({ type: "text", sessionID: taskId, messageID: id, partID: `prt_${id}`, text });
    for (let i = 0; i < 2; i++) f.host.emit({ type: "message", sessionID: taskId, message: { ...base, completedAt: at, usage: usage(tokens, usd) } });
  };
  const told = (taskId: string) => store.tasks.pendingNotifications(PARENT).filter((n) => n.taskId === taskId);
  return { ...f, store, spend, errors, request, told };
}

describe("a task's budget", () => {
  it("stops the task after the request that passed it: error budget_exceeded, its last answer, child aborted, parent told once", async () => {
    const f = budgetFixture();
    const id = await f.launch({ budget: { tokens: 2500 } });
    assert.deepEqual(f.store.tasks.get(id)?.budget, { tokens: 2500 });
    assert.match(await f.call("background_output", { task_id: id }), /^Budget: 2\.5k tokens \(with the tasks it launches\)$/m);
    f.request(id, 1000);
    f.request(id, 1000);
    assert.equal(f.store.tasks.get(id)?.status, "running", "2.0k of 2.5k: within");
    f.request(id, 1000, 0, "found three things so far");
    const task = f.store.tasks.get(id)!;
    assert.equal(task.status, "error");
    assert.equal(task.error, "budget_exceeded: spent 3.0k of 2.5k tokens (3 requests)");
    assert.equal(task.result, "found three things so far");
    await f.flush();
    assert.deepEqual(f.host.aborted, [id]);
    f.request(id, 1000); // a late request (the aborted one's numbers) counts, but stops nothing again
    await f.flush();
    assert.equal(f.told(id).length, 1, "the parent is told once");
    assert.match(f.told(id)[0].text, /Error: budget_exceeded: spent 3\.0k of 2\.5k tokens[\s\S]*Last answer:\nfound three things so far/);
    assert.deepEqual(f.host.aborted, [id], "aborted once");
    await f.manager.beforeModelRequest(id);
    assert.deepEqual(f.host.aborted, [id, id], "a further model request of its child waits for another abort");
    await f.manager.beforeModelRequest(PARENT);
    assert.equal(f.host.aborted.length, 2, "any other session's requests go on untouched");
    f.host.setActivity(id, "idle");
    await f.manager.beforeModelRequest(id);
    assert.equal(f.host.aborted.length, 2, "once its child is idle, a later prompt of it (the user's own) is not held");
    assert.equal(f.spend.line(id), "4.0k tok", "the late request is recorded all the same");
    assert.deepEqual(f.errors, []);
  });

  it("a USD budget names the dollars; a tool-call step without text hands back the latest text before it", async () => {
    const f = budgetFixture();
    const id = await f.launch({ budget: { usd: 0.05 } });
    f.request(id, 1000, 0.03, "half way");
    f.request(id, 1000, 0.03, "");
    const task = f.store.tasks.get(id)!;
    assert.equal(task.error, "budget_exceeded: spent $0.060 of $0.050 (2.0k tokens, 2 requests)");
    assert.equal(task.result, "half way");
  });

  it("an ancestor's budget counts its descendants' requests: the whole tree stops, the top task's parent told once", async () => {
    const f = budgetFixture({ maxDepth: 3 });
    const top = await f.launch({ budget: { tokens: 2500 } });
    const below = await f.launch({ description: "helper" }, { sessionID: top });
    const deepest = await f.launch({ description: "helper's helper" }, { sessionID: below });
    f.request(top, 1000);
    f.request(deepest, 1000);
    f.request(below, 1000);
    await f.flush();
    assert.equal(f.store.tasks.get(top)?.status, "error");
    assert.match(f.store.tasks.get(top)!.error!, /^budget_exceeded: spent 3\.0k of 2\.5k tokens/);
    assert.equal(f.store.tasks.get(below)?.status, "cancelled");
    assert.equal(f.store.tasks.get(deepest)?.status, "cancelled");
    assert.deepEqual(new Set(f.host.aborted), new Set([top, below, deepest]));
    assert.equal(f.told(top).length, 1);
  });

  it("a budget of its own inside a budgeted tree stops only its subtree when only its own is passed", async () => {
    const f = budgetFixture();
    const top = await f.launch({ budget: { tokens: 10_000 } });
    const below = await f.launch({ description: "helper", budget: { tokens: 1500 } }, { sessionID: top });
    f.request(below, 1000);
    f.request(below, 1000);
    await f.flush();
    assert.equal(f.store.tasks.get(below)?.status, "error");
    assert.equal(f.store.tasks.get(top)?.status, "running");
    f.request(top, 7000);
    assert.equal(f.store.tasks.get(top)?.status, "running", "9.0k of 10.0k");
    f.request(top, 1001);
    assert.equal(f.store.tasks.get(top)?.status, "error");
  });

  it("the taskBudget option is the default; a task's own budget replaces it", async () => {
    const f = budgetFixture({ taskBudget: { usd: 1 } });
    assert.deepEqual(f.store.tasks.get(await f.launch())?.budget, { usd: 1 });
    assert.match(await f.call("background_task", { description: "x", prompt: "y", agent: "general" }), /^budget: \$1\.00, with the tasks it launches; past it the task is stopped\.$/m);
    assert.deepEqual(f.store.tasks.get(await f.launch({ budget: { tokens: 5000 } }))?.budget, { tokens: 5000 });
  });

  it("bad budgets are refused with the fix, and nothing is launched", async () => {
    const f = budgetFixture();
    const sessions = f.host.sessions.size;
    for (const [budget, said] of [
      [{ usd: -1 }, /budget\.usd must be a number above 0, got -1/],
      [{ tokens: 0 }, /budget\.tokens must be a number above 0, got 0/],
      [{ usd: Number.NaN }, /budget\.usd must be a number above 0, got NaN|invalid arguments/],
      [{ tokens: 10.5 }, /budget\.tokens must be a whole number/],
      [{}, /budget must set usd and\/or tokens, e\.g\. \{ "usd": 0\.5 \}/],
      [{ dollars: 1 }, /budget must set usd and\/or tokens|invalid arguments/],
    ] as const) {
      const out = await f.call("background_task", { description: "x", prompt: "y", agent: "general", budget });
      assert.match(out, said, out);
      assert.doesNotMatch(out, /Launched/);
    }
    assert.equal(f.host.sessions.size, sessions, "no child session was made");
    assert.equal(f.store.tasks.list({ includeCleared: true }).length, 0);
  });

  it("resume: refused without a budget or with one already passed; with a larger one the same session goes on until that one", async () => {
    const f = budgetFixture();
    const id = await f.launch({ budget: { tokens: 1500 } });
    f.request(id, 1000);
    f.request(id, 1000, 0, "two done");
    assert.equal(f.store.tasks.get(id)?.status, "error");
    const resume = (budget?: object) => f.call("background_task", { description: "x", prompt: "go on", agent: "general", resume: id, ...(budget ? { budget } : {}) });
    assert.match(await resume(), /stopped at its budget \(budget_exceeded: spent 2\.0k of 1\.5k tokens \(2 requests\)\)\. The user decides whether it goes on: ask them whether to resume it with a larger budget/);
    assert.match(await resume({ tokens: 1800 }), /has already spent more than that budget \(spent 2\.0k of 1\.8k tokens/);
    assert.match(await resume({ tokens: -5 }), /budget\.tokens must be a number above 0/);
    assert.equal(f.store.tasks.get(id)?.status, "error", "refusals change nothing");
    assert.match(await resume({ tokens: 4500 }), /Resumed background task .* Its budget is now 4\.5k tokens, counted over all it has spent\./);
    const resumed = f.store.tasks.get(id)!;
    assert.equal(resumed.status, "resumed");
    assert.deepEqual(resumed.budget, { tokens: 4500 });
    assert.equal(f.host.promptsTo(id).at(-1)?.text, "go on");
    const aborts = f.host.aborted.length;
    await f.manager.beforeModelRequest(id);
    assert.equal(f.host.aborted.length, aborts, "a resumed child's requests are no longer held");
    f.request(id, 1000);
    f.request(id, 1000);
    assert.equal(f.store.tasks.get(id)?.status, "resumed", "4.0k of 4.5k: counted from the tree's whole spend");
    f.request(id, 1000, 0, "five done");
    await f.flush();
    const stopped = f.store.tasks.get(id)!;
    assert.equal(stopped.error, "budget_exceeded: spent 5.0k of 4.5k tokens (5 requests)");
    assert.equal(stopped.result, "five done");
    assert.equal(f.told(id).length, 2, "told once per stop");
  });

  it("checking is cheap: a tree's total is read from the store once, not per request", async () => {
    let treeReads = 0;
    const f = budgetFixture({}, (rows) => ({
      put: (...a) => rows.put(...a), messagesOf: (id) => rows.messagesOf(id), costSince: (ms) => rows.costSince(ms),
      ofTasks: (ids) => (treeReads++, rows.ofTasks(ids)),
    }));
    const id = await f.launch({ budget: { tokens: 1_000_000 } });
    for (let i = 0; i < 50; i++) f.request(id, 1000);
    assert.equal(treeReads, 1);
    const free = await f.launch();
    for (let i = 0; i < 50; i++) f.request(free, 1000);
    assert.equal(treeReads, 1, "a task with no budget above it reads nothing");
  });

  it("a settled task's later requests are still recorded (a notice woke its child)", async () => {
    const f = budgetFixture();
    const id = await f.launch();
    f.request(id, 1000);
    f.host.finishRun(id, "done");
    await f.flush();
    assert.equal(f.store.tasks.get(id)?.status, "completed");
    f.request(id, 2000);
    assert.equal(f.spend.line(id), "3.0k tok");
  });
});

describe("the daily budget (dailyBudgetUsd)", () => {
  it("reached: new tasks and resumes are refused with the figure and the option; queued ones wait for the next day; running ones go on", async () => {
    const f = budgetFixture({ dailyBudgetUsd: 0.01, maxConcurrentTotal: 1 });
    const first = await f.launch();
    const queued = await f.launch({ description: "waits" });
    assert.equal(f.store.tasks.get(queued)?.status, "queued");
    f.request(first, 1000, 0.006);
    f.request(first, 1000, 0.006);
    assert.equal(f.store.tasks.get(first)?.status, "running", "a running task is not stopped by the daily budget");
    const refused = await f.call("background_task", { description: "more", prompt: "y", agent: "general" });
    assert.match(refused, /daily budget of background work is reached: \$0\.012 of \$0\.010 spent today \(option dailyBudgetUsd/);
    f.host.finishRun(first, "done");
    await f.flush();
    assert.equal(f.store.tasks.get(first)?.status, "completed");
    await f.manager.poll();
    assert.equal(f.store.tasks.get(queued)?.status, "queued", "waits while the budget is reached");
    assert.match(await f.call("background_task", { description: "x", prompt: "again", agent: "general", resume: first }), /dailyBudgetUsd/);
    f.clock.jump(24 * 3600 * 1000);
    await f.manager.poll();
    assert.equal(f.store.tasks.get(queued)?.status, "running", "the next day it starts");
  });

  it("is the machine's: two stores (two projects, two processes) on one database count one total", () => {
    const db = tempDb();
    const a = Store.open({ path: db.path, projectId: "alpha" });
    const b = Store.open({ path: db.path, projectId: "beta" });
    after(() => { a.close(); b.close(); db.cleanup(); });
    const now = Date.now();
    const save = (store: Store, id: string, createdAt: number) => store.tasks.save({
      id, parentSessionID: "ses_p", batchId: "m", description: "d", prompt: "p", agent: "general", model: { providerID: "x", modelID: "y" },
      parentAgent: "build", status: "running", isForked: false, resumeCount: 0, progress: { toolCalls: 0, lastTools: [], lastActivityAt: createdAt }, createdAt, promptedAt: createdAt,
    });
    const spent = (usd: number) => ({ tokens: { input: 1, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd: usd, requests: 1 });
    save(a, "ses_a", now);
    save(b, "ses_b", now);
    save(b, "ses_old", now - 3 * 24 * 3600 * 1000);
    a.spend.put("ses_a", "m1", spent(0.6));
    b.spend.put("ses_old", "m2", spent(5));
    // Each process writes its spend rows within 100 ms (write-behind); flushed here instead of waiting.
    const written = () => [a, b].forEach((s) => (s.spend as Partial<{ flush(): void }>).flush?.());
    written();
    const options = { dailyBudgetUsd: 1 };
    assert.deepEqual({ ...dailyBudgetState(b.spend, options, now), since: 0 }, { limitUsd: 1, spentUsd: 0.6, reached: false, since: 0 });
    b.spend.put("ses_b", "m3", spent(0.4));
    written();
    assert.equal(dailyBudgetState(a.spend, options, now).reached, true, "reached once for both: each sees the other's spend");
    assert.equal(dailyBudgetState(a.spend, { dailyBudgetUsd: 0 }, now).reached, false, "0: no daily budget");
  });
});

describe("budget values", () => {
  it("parseBudget takes usd and/or tokens above 0 and names the fix otherwise", () => {
    assert.deepEqual(parseBudget({ usd: 0.5, tokens: 1000 }, "budget"), { budget: { usd: 0.5, tokens: 1000 } });
    for (const bad of [null, [], 3, {}, { usd: 0 }, { tokens: Infinity }, { usd: "1" }, { usd: 1, extra: 2 }]) {
      assert.ok(parseBudget(bad, "budget").problem, JSON.stringify(bad));
    }
  });

  it("options: taskBudget and dailyBudgetUsd are checked", () => {
    assert.deepEqual(parseOptions({ taskBudget: { usd: 2 }, dailyBudgetUsd: 5 }).taskBudget, { usd: 2 });
    assert.equal(parseOptions({}).taskBudget, false);
    assert.throws(() => parseOptions({ taskBudget: { usd: -2 } }), /taskBudget\.usd must be a number above 0/);
    assert.throws(() => parseOptions({ dailyBudgetUsd: -1 }), /"dailyBudgetUsd" must be a number of USD \(0 = none\) from 0/);
  });

  it("the stop text: dollars when the USD limit is passed, tokens otherwise", () => {
    const spend = { tokens: { input: 100_000, output: 12_000, reasoning: 0, cacheRead: 50_000, cacheWrite: 0 }, costUsd: 0.52, requests: 9 };
    assert.equal(budgetExceededText(spend, { usd: 0.5 }), "budget_exceeded: spent $0.520 of $0.500 (112.0k tokens, 9 requests)");
    assert.equal(budgetExceededText(spend, { usd: 1, tokens: 100_000 }), "budget_exceeded: spent 112.0k of 100.0k tokens ($0.520, 9 requests)");
  });
});

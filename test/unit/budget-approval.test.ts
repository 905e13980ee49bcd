import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT, MODEL } from "../helpers/core-fixture.ts";
import { tempDb } from "../helpers/automation-fixture.ts";
import { Store } from "../../src/store/store.ts";
import { TaskSpend } from "../../src/cost/task-spend.ts";
import type { Options } from "../../src/options/options.ts";
import { askForBudgetsByDefault } from "../../src/plugin/automation-permission.ts";

type Ask = { permission: string; patterns: string[]; always: string[]; metadata: Record<string, unknown> };

/** Tasks with spend recorded (as in budget.test.ts), and tool calls whose permission prompts are answered by `answer`. */
function fixture(overrides: Partial<Options> = {}) {
  const db = tempDb();
  const store = Store.open({ path: db.path, projectId: "p" });
  const spend = new TaskSpend(store.spend, store.tasks, () => {});
  const f = coreFixture(overrides, store.tasks, { spend });
  after(() => {
    f.manager.dispose();
    store.close();
    db.cleanup();
  });
  let seq = 0;
  /** One finished model request of `taskId`'s child. */
  const request = (taskId: string, tokens: number, usd = 0) => {
    const id = `msg_req${String(++seq).padStart(4, "0")}`;
    const at = f.clock.now();
    const usage = { input: tokens, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, costUsd: usd };
    f.host.emit({ type: "message", sessionID: taskId, message: { id, role: "assistant", createdAt: at, completedAt: at, toolCallsPending: true, usage } });
  };
  const asks: Ask[] = [];
  let answer: "approve" | "reject" = "approve";
  let msg = 0;
  /** A tool call from `sessionID` in OpenCode's shape, with its `ask`. */
  const call = async (name: string, args: unknown, sessionID = PARENT) => String(await f.tools[name].execute(args as never, {
    sessionID, messageID: `msg_call${++msg}`, agent: "build", abort: new AbortController().signal,
    extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
    ask: async (input: Ask) => {
      asks.push(input);
      if (answer === "reject") throw new Error("The user rejected permission to use this specific tool call.");
    },
  } as never));
  const launch = async (args: Record<string, unknown>, sessionID = PARENT) => {
    const out = await call("background_task", { description: "look around", prompt: "find things", agent: "general", ...args }, sessionID);
    return { out, id: out.match(/task_id: (\S+)/)?.[1] };
  };
  return { ...f, store, request, asks, call, launch, answerWith: (a: "approve" | "reject") => (answer = a) };
}

describe("a child spends at most what its own task has left", () => {
  it("a larger explicit budget is cut to what is left, and the answer says so", async () => {
    const f = fixture();
    const { id: child } = await f.launch({ budget: { tokens: 10_000, usd: 1 } });
    f.request(child!, 4_000, 0.3);
    const { out, id } = await f.launch({ description: "greedy", budget: { usd: 1000 } }, child);
    assert.ok(id, out);
    assert.deepEqual(f.store.tasks.get(id!)?.budget, { usd: 0.7, tokens: 6000 });
    assert.match(out, /The budget asked for \(\$1000\.00\) was cut to \$0\.700 or 6\.0k tokens: what task ses_\w+ has left\./);
    assert.deepEqual(f.asks, [], "within its own budget: nobody is asked");
  });

  it("a launch without a budget gets what is left (a subagent session's launch too)", async () => {
    const f = fixture();
    const { id: child } = await f.launch({ budget: { tokens: 5_000 } });
    f.request(child!, 1_000);
    const { id } = await f.launch({ description: "plain" }, child);
    assert.deepEqual(f.store.tasks.get(id!)?.budget, { tokens: 4000 });
    const { id: sub } = await f.host.createSession({ parentID: child, title: "subagent" });
    const { id: fromSub } = await f.launch({ description: "from a subagent", budget: { tokens: 1_000_000 } }, sub);
    assert.deepEqual(f.store.tasks.get(fromSub!)?.budget, { tokens: 4000 }, "a subagent session spends its child's budget");
  });

  it("a resume by a child of a task in its tree is cut too", async () => {
    const f = fixture();
    const { id: child } = await f.launch({ budget: { usd: 0.5 } });
    const { id: mine } = await f.launch({ description: "mine" }, child);
    f.host.finishRun(mine!, "done");
    await f.flush();
    assert.equal(f.store.tasks.get(mine!)?.status, "completed");
    const out = await f.call("background_task", { description: "again", prompt: "more", agent: "general", resume: mine, budget: { usd: 1000 } }, child);
    assert.match(out, /Resumed background task/);
    assert.match(out, /cut to \$0\.50/);
    assert.deepEqual(f.store.tasks.get(mine!)?.budget, { usd: 0.5 });
  });

  it("a child with nothing left launches nothing", async () => {
    const f = fixture();
    const { id: child } = await f.launch({ budget: { tokens: 1_000 } });
    f.request(child!, 999);
    f.request(child!, 1);
    const before = f.store.tasks.list({ includeCleared: true }).length;
    const { out, id } = await f.launch({ description: "more" }, child);
    assert.equal(id, undefined);
    assert.match(out, /has no budget left; nothing was launched/);
    assert.equal(f.store.tasks.list({ includeCleared: true }).length, before);
  });
});

describe("background_budget: the user decides about more", () => {
  it("a budget above the taskBudget option asks the user, naming the task and both budgets; approved, it launches", async () => {
    const f = fixture({ taskBudget: { usd: 0.5 } });
    const { out, id } = await f.launch({ description: "big job", budget: { usd: 5 } });
    assert.ok(id, out);
    assert.equal(f.asks.length, 1);
    const [ask] = f.asks;
    assert.equal(ask.permission, "background_budget");
    assert.equal(ask.metadata.title, 'Budget $5.00 for new task "big job" (taskBudget option: $0.500)');
    assert.deepEqual(ask.metadata.oldBudget, { usd: 0.5 });
    assert.ok(Object.values(ask.metadata).every((v) => v !== undefined), "no undefined value: OpenCode's GET /permission refuses one");
    assert.deepEqual(ask.metadata.newBudget, { usd: 5 });
    assert.deepEqual(f.store.tasks.get(id!)?.budget, { usd: 5 });
    await f.launch({ description: "small", budget: { usd: 0.5 } });
    assert.equal(f.asks.length, 1, "at the option: not asked");
  });

  it("rejected: nothing launched, nothing stored, no session made; the answer says the user declined", async () => {
    const f = fixture({ taskBudget: { usd: 0.5 } });
    f.answerWith("reject");
    const sessions = (await f.host.listSessions()).length;
    const { out, id } = await f.launch({ description: "big job", budget: { tokens: 10_000_000 } });
    assert.equal(id, undefined);
    assert.match(out, /The user declined the budget 10\.0M tokens for new task "big job"; nothing was launched/);
    assert.equal(f.store.tasks.list({ includeCleared: true }).length, 0);
    assert.equal((await f.host.listSessions()).length, sessions);
  });

  it("a resume of a task stopped at its budget with a larger one asks; rejected, it stays stopped and gets no prompt", async () => {
    const f = fixture();
    const { id } = await f.launch({ budget: { tokens: 1_000 } });
    f.request(id!, 2_000);
    await f.flush();
    const stopped = f.store.tasks.get(id!)!;
    assert.equal(stopped.status, "error");
    const notice = f.store.tasks.pendingNotifications(PARENT).map((n) => n.text).join("\n");
    assert.match(notice, /ask the user whether to resume it with a larger budget/);
    assert.doesNotMatch(notice, /raise the budget/i);
    const prompts = f.host.promptsTo(id!).length;
    f.answerWith("reject");
    const resume = { description: "again", prompt: "go on", agent: "general", resume: id, budget: { tokens: 50_000 } };
    assert.match(await f.call("background_task", resume), /The user declined the budget 50\.0k tokens for task ses_\w+ "look around"; nothing was resumed/);
    assert.equal(f.asks.length, 1);
    assert.match(String(f.asks[0].metadata.title), /was 1\.0k tokens/);
    assert.deepEqual(f.asks[0].metadata.oldBudget, { tokens: 1000 });
    assert.equal(f.store.tasks.get(id!)?.status, "error");
    assert.deepEqual(f.store.tasks.get(id!)?.budget, { tokens: 1000 });
    assert.equal(f.host.promptsTo(id!).length, prompts);
    f.answerWith("approve");
    assert.match(await f.call("background_task", resume), /Resumed background task/);
    assert.deepEqual(f.store.tasks.get(id!)?.budget, { tokens: 50_000 });
  });

  it("the plugin asks for background_budget unless the user set it", () => {
    const unset: { permission?: unknown } = { permission: { edit: "allow" } };
    askForBudgetsByDefault(unset);
    assert.deepEqual(unset.permission, { edit: "allow", background_budget: "ask" });
    const set: { permission?: unknown } = { permission: { background_budget: "allow" } };
    askForBudgetsByDefault(set);
    assert.deepEqual(set.permission, { background_budget: "allow" });
  });
});

import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, pluginDbPath, taskIdsIn, toolOutputs, waitUntil, pendingPermissions, answerPermission, MOCK_MODEL, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, messageText, type MockReply, type MockRequest } from "../harness/mock-model.ts";

/**
 * Budgets on the real host. The mock model is priced ($3 / $15 per million input / output tokens)
 * and every answer reports 900 input and 100 output tokens: each model request counts 1.0k tokens
 * and costs $0.0042. A child whose prompt is `LOOP <n>` makes n requests: each of the first n - 1
 * says `step <k> done` and calls bash; the last says `finished after <n> requests`.
 */
const PRICE = { input: 3, output: 15 };
const PER_REQUEST = { input: 900, output: 100 };

function loopOf(req: MockRequest): number | undefined {
  const first = req.body.messages.find((m) => m.role === "user");
  const n = first && /^LOOP (\d+)$/m.exec(messageText(first))?.[1];
  return n ? Number(n) : undefined;
}

function responder(req: MockRequest): MockReply {
  const n = req.isTitle ? undefined : loopOf(req);
  if (n === undefined) return defaultResponder(req);
  const done = req.body.messages.filter((m) => m.role === "assistant" && m.tool_calls?.length).length;
  if (done < n - 1) {
    return { text: `step ${done + 1} done`, toolCalls: [{ name: "bash", args: { command: `echo step ${done + 1}`, description: "a step" } }], usage: PER_REQUEST };
  }
  return { text: `finished after ${done + 1} requests`, usage: PER_REQUEST };
}

describe("budgets on the real host", () => {
  let stack: Stack;
  let parent: string;
  let child: string;
  after(async () => stack?.stop());

  /** The model requests the child of `loop` made (its conversation starts with that LOOP line). */
  const requestsOf = (loop: number) => stack.mock.requests().filter((r) => loopOf(r) === loop).length;
  const notices = async (session: string, task: string) => (await stack.notifications(session)).filter((n) => n.includes(`task_id="${task}"`));
  const lastOutput = async (session: string, tool: string) => (await toolOutputs(stack, session, tool)).at(-1) ?? "";
  const idleAfter = (session: string, from: number) =>
    stack.events.waitForEvent((e) => e.type === "session.idle" && (e.properties as { sessionID?: string }).sessionID === session, 60_000, from);

  it("budget {tokens: 2500}: stopped after the request that passed it, budget_exceeded with its last answer, parent told once, no further request", async () => {
    stack = await startStack({ responder, modelCost: PRICE, pluginOptions: { pollIntervalMs: 500, dailyBudgetUsd: 0.06 } });
    parent = await stack.newSession("parent: budget");
    const from = stack.events.events.length;
    await stack.say(parent, call("background_task", { description: "loops ten times", prompt: "LOOP 10", agent: "general", budget: { tokens: 2500 } }));
    [child] = taskIdsIn(await lastOutput(parent, "background_task"));
    assert.ok(child, await lastOutput(parent, "background_task"));
    const told = (await waitUntil(async () => (await notices(parent, child))[0], { timeoutMs: 60_000, what: "the stop notice" }));
    assert.match(told, /status="error"/);
    assert.match(told, /^Error: budget_exceeded: spent 3\.0k of 2\.5k tokens \(\$0\.013, 3 requests\)$/m, told);
    assert.match(told, /^Last answer:\nstep 3 done$/m, told);
    // Its child goes idle only once aborted: had it not been, it would have gone on to ten requests first.
    // (Without the hold before each model request, 1 run in 4 saw a fourth request: the abort raced it.)
    await idleAfter(child, from);
    assert.equal(requestsOf(10), 3, "no model request after the one that passed the budget");
    const output = (await stack.say(parent, call("background_output", { task_id: child })), await lastOutput(parent, "background_output"));
    assert.match(output, /^Error: budget_exceeded: spent 3\.0k of 2\.5k tokens/m, output);
    assert.match(output, /^Last answer:\nstep 3 done$/m, output);
    assert.equal((await notices(parent, child)).length, 1, "the parent is told once");
    assert.equal(requestsOf(10), 3);
  });

  it("resume without a budget is refused; with a larger one the user is asked (background_budget), and once approved the same session goes on to its end", async () => {
    await stack.say(parent, call("background_task", { description: "again", prompt: "go on", agent: "general", resume: child }));
    assert.match(await lastOutput(parent, "background_task"), /stopped at its budget \(budget_exceeded: .*\)\. The user decides whether it goes on: ask them whether to resume it with a larger budget/);
    assert.equal(requestsOf(10), 3, "a refused resume sends nothing");
    const before = (await toolOutputs(stack, parent, "background_task")).length;
    void stack.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("background_task", { description: "again", prompt: "go on", agent: "general", resume: child, budget: { tokens: 20000 } }) }] },
    });
    const asked = await waitUntil(async () => (await pendingPermissions(stack)).find((p) => p.sessionID === parent), { timeoutMs: 15_000, what: "the background_budget prompt" });
    assert.equal(asked.permission, "background_budget");
    assert.equal(requestsOf(10), 3, "nothing goes on while the user is asked");
    await answerPermission(stack, asked.id, "once");
    await waitUntil(async () => (await toolOutputs(stack, parent, "background_task"))[before], { timeoutMs: 20_000, what: "the resume's answer" });
    assert.match(await lastOutput(parent, "background_task"), new RegExp(`^Resumed background task ${child} \\(resume #1\\)`));
    const done = await waitUntil(async () => (await notices(parent, child)).find((n) => n.includes('status="completed"')), { timeoutMs: 60_000, what: "the resumed task's result" });
    assert.match(done, /^Result:\nfinished after 10 requests$/m, done);
    assert.match(done, /, spent \$0\.042 · 10\.0k tok\.$/m, done);
    assert.equal(requestsOf(10), 10, "the same conversation went on from its fourth request");
  });

  it("dailyBudgetUsd reached: a new task is refused with the figure and the option's name", async () => {
    const other = await stack.newSession("parent: daily budget");
    await stack.say(other, call("background_task", { description: "five more", prompt: "LOOP 5", agent: "general" }));
    const [id] = taskIdsIn(await lastOutput(other, "background_task"));
    assert.ok(id, "under the daily budget ($0.042 of $0.060) it launches");
    await waitUntil(async () => (await notices(other, id)).length > 0, { timeoutMs: 60_000, what: "the five-request task's result" });
    await stack.say(other, call("background_task", { description: "one too many", prompt: "LOOP 2", agent: "general" }));
    const refused = await lastOutput(other, "background_task");
    assert.match(refused, /daily budget of background work is reached: \$0\.063 of \$0\.060 spent today \(option dailyBudgetUsd, all projects\)/, refused);
    assert.equal(requestsOf(2), 0, "the refused task never reached the model");
  });

  it("a second OpenCode on the same database sees the same day's total: the daily budget is reached once, not once per process", async () => {
    const second = await startStack({ mock: stack.mock, responder, modelCost: PRICE, pluginOptions: { dbPath: pluginDbPath(stack.server), dailyBudgetUsd: 0.06 } });
    try {
      const session = await second.newSession("parent: the other OpenCode");
      await second.say(session, call("background_task", { description: "other process", prompt: "LOOP 3", agent: "general" }));
      const refused = (await toolOutputs(second, session, "background_task")).at(-1) ?? "";
      assert.match(refused, /daily budget of background work is reached: \$0\.063 of \$0\.060 spent today \(option dailyBudgetUsd, all projects\)/, refused);
      assert.equal(requestsOf(3), 0);
    } finally {
      await second.stop();
    }
  });
});

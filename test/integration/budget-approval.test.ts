import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import {
  startStack, call, taskIdsIn, toolOutputs, waitUntil, pluginDbPath, queryDb, pendingPermissions, answerPermission, MOCK_MODEL, type Stack,
} from "../harness/plugin-stack.ts";
import { messageText, type MockRequest } from "../harness/mock-model.ts";

/**
 * Who decides about more budget, on the real host: a budget above the taskBudget option asks the
 * user (background_budget; rejected, nothing is launched), and a child's larger budget is cut to
 * what its own task has left.
 */
describe("background_budget on the real host", () => {
  let stack: Stack | undefined;
  after(async () => stack?.stop());
  const taskCount = (s: Stack) => queryDb<{ n: number }>(pluginDbPath(s.server), "SELECT count(*) AS n FROM tasks")[0]!.n;
  const budgetOf = (s: Stack, id: string) => queryDb<{ budget_usd: number | null; budget_tokens: number | null }>(pluginDbPath(s.server), "SELECT budget_usd, budget_tokens FROM tasks WHERE id = ?", id)[0];

  it("a budget above taskBudget asks the user; rejected, nothing is launched, stored or prompted", async () => {
    const s = (stack = await startStack({ pluginOptions: { pollIntervalMs: 500, taskBudget: { usd: 0.5 } } }));
    const parent = await s.newSession("parent: big budget");
    const sessionsBefore = ((await s.server.client.session.list()).data ?? []).length;
    void s.server.client.session.promptAsync({
      path: { id: parent },
      body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("background_task", { description: "big job", prompt: "BIG-MARK", agent: "general", budget: { usd: 5 } }) }] },
    });
    const asked = await waitUntil(async () => (await pendingPermissions(s)).find((p) => p.sessionID === parent), { timeoutMs: 15_000, what: "the background_budget prompt" });
    assert.equal(asked.permission, "background_budget");
    assert.deepEqual(asked.patterns, ["$5.00"]);
    assert.equal(taskCount(s), 0, "nothing is stored while the user is asked");
    await answerPermission(s, asked.id, "reject");
    const out = await waitUntil(async () => (await toolOutputs(s, parent, "background_task"))[0], { timeoutMs: 20_000, what: "the launch's answer" });
    assert.match(out, /The user declined the budget \$5\.00 for new task "big job"; nothing was launched/);
    assert.equal(taskCount(s), 0);
    assert.equal(((await s.server.client.session.list()).data ?? []).length, sessionsBefore, "no child session was made");
    const firstUser = (r: MockRequest) => messageText(r.body.messages.find((m) => m.role === "user")!);
    assert.equal(s.mock.requests().filter((r) => firstUser(r).startsWith("BIG-MARK")).length, 0, "no child ever reached the model");
  });

  it("a child's larger budget is cut to what its own task has left, and its answer says so; nobody is asked", async () => {
    const s = stack!;
    const parent = await s.newSession("parent: child budget");
    const childPrompt = ["CHILD-BUDGET-MARK", call("background_task", { description: "greedy", prompt: "REPLY greedy done", agent: "general", budget: { usd: 0.4 } })].join("\n");
    await s.say(parent, call("background_task", { description: "small child", prompt: childPrompt, agent: "general", budget: { usd: 0.3 } }));
    const [child] = taskIdsIn((await toolOutputs(s, parent, "background_task")).join("\n"));
    assert.ok(child);
    const out = await waitUntil(async () => (await toolOutputs(s, child, "background_task"))[0], { timeoutMs: 30_000, what: "the child's launch answer" });
    const [grandchild] = taskIdsIn(out);
    assert.ok(grandchild, out);
    assert.match(out, /The budget asked for \(\$0\.400\) was cut to \$0\.300: what task ses_\w+ has left\./);
    assert.deepEqual(budgetOf(s, grandchild), { budget_usd: 0.3, budget_tokens: null });
    assert.deepEqual(await pendingPermissions(s), []);
  });
});

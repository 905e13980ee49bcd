import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { messageText, type MockRequest } from "../harness/mock-model.ts";

/**
 * A child stays in its own tree, on the real host: a child (scripted by the mock model) tries to
 * resume the user's finished task with a huge budget and to cancel `ses_`, in one response.
 */
describe("a child sees and touches only its own tree, on the real host", () => {
  let stack: Stack | undefined;
  let nested: Stack | undefined;
  after(async () => {
    await stack?.stop();
    await nested?.stop();
  });

  const firstUserText = (req: MockRequest) => {
    const first = req.body.messages.find((m) => m.role === "user");
    return first ? messageText(first) : "";
  };
  const statusOf = (s: Stack, id: string) => queryDb<{ status: string; budget_usd: number | null }>(pluginDbPath(s.server), "SELECT status, budget_usd FROM tasks WHERE id = ?", id)[0];

  it("a child resuming the user's finished task and cancelling ses_ is refused; its answers name nothing outside its tree; the user's task makes no new model request", async () => {
    const s = (stack = await startStack({ pluginOptions: { pollIntervalMs: 500 } }));
    const parent = await s.newSession("parent: scope");
    await s.say(parent, call("background_task", { description: "user secret work", prompt: "USER-TASK-MARK\nREPLY the user's result", agent: "general" }));
    const [userTask] = taskIdsIn((await toolOutputs(s, parent, "background_task")).join("\n"));
    assert.ok(userTask);
    await waitUntil(() => statusOf(s, userTask)?.status === "completed", { timeoutMs: 30_000, what: "the user's task completed" });
    const userRequests = () => s.mock.requests().filter((r) => firstUserText(r).startsWith("USER-TASK-MARK")).length;
    const before = userRequests();
    assert.ok(before > 0, "the user's task's own requests are counted");

    const childPrompt = [
      "CHILD-MARK",
      call("background_task", { description: "go on", prompt: "REPLY stolen", agent: "general", resume: userTask, budget: { usd: 1000 } }),
      call("background_cancel", { task_id: "ses_" }),
    ].join("\n");
    await s.say(parent, call("background_task", { description: "unattended child", prompt: childPrompt, agent: "general", budget: { usd: 0.01 } }));
    const [child] = taskIdsIn((await toolOutputs(s, parent, "background_task")).slice(-1).join("\n"));
    assert.ok(child && child !== userTask);
    const resumed = await waitUntil(async () => (await toolOutputs(s, child, "background_task"))[0], { timeoutMs: 30_000, what: "the child's resume answer" });
    const cancelled = await waitUntil(async () => (await toolOutputs(s, child, "background_cancel"))[0], { timeoutMs: 30_000, what: "the child's cancel answer" });
    await waitUntil(() => statusOf(s, child)?.status === "completed", { timeoutMs: 30_000, what: "the child done" });

    assert.equal(resumed, `background_task: No background task or batch matches "${userTask}". Call background_list to see this session's task ids.`);
    assert.equal(cancelled, 'background_cancel: No background task or batch matches "ses_". Call background_list to see this session\'s task ids.');
    for (const answer of [resumed.replaceAll(userTask, ""), cancelled]) {
      assert.ok(!answer.includes(userTask) && !answer.includes("user secret work"), answer);
    }
    assert.equal(statusOf(s, userTask)?.status, "completed");
    assert.equal(statusOf(s, userTask)?.budget_usd, null, "the user's task got no budget");
    assert.equal(userRequests(), before, "the user's task made no new model request");
  });

  it("an OpenCode subagent session of a child (the built-in task tool) is held to the child's tree", async () => {
    // A background child is a session with a parent: OpenCode counts it as one subagent level, and
    // by default (subagent_depth 1) refuses its task tool ("Subagent depth limit reached (1)").
    await stack?.stop();
    stack = undefined;
    const s = (nested = await startStack({ pluginOptions: { pollIntervalMs: 500 }, config: { subagent_depth: 2 } }));
    const parent = await s.newSession("parent: subagent");
    await s.say(parent, call("background_task", { description: "user other work", prompt: "USER-TWO-MARK\nREPLY done two", agent: "general" }));
    const [userTask] = taskIdsIn((await toolOutputs(s, parent, "background_task")).join("\n"));
    await waitUntil(() => statusOf(s, userTask)?.status === "completed", { timeoutMs: 30_000, what: "the user's task completed" });
    const subagentPrompt = ["SUBAGENT-MARK", call("background_cancel", { task_id: "ses_" }), call("background_output", { task_id: userTask })].join("\n");
    const childPrompt = ["CHILD-TWO-MARK", call("task", { description: "look around", prompt: subagentPrompt, subagent_type: "general" })].join("\n");
    await s.say(parent, call("background_task", { description: "child with a subagent", prompt: childPrompt, agent: "general" }));
    const [child] = taskIdsIn((await toolOutputs(s, parent, "background_task")).slice(-1).join("\n"));
    const sub = await waitUntil(async () => {
      const sessions = (await s.server.client.session.list()).data ?? [];
      return sessions.find((x) => x.parentID === child)?.id;
    }, { timeoutMs: 30_000, what: "the child's subagent session" });
    const cancelled = await waitUntil(async () => (await toolOutputs(s, sub, "background_cancel"))[0], { timeoutMs: 30_000, what: "the subagent's cancel answer" });
    const output = await waitUntil(async () => (await toolOutputs(s, sub, "background_output"))[0], { timeoutMs: 30_000, what: "the subagent's output answer" });
    assert.equal(cancelled, 'background_cancel: No background task or batch matches "ses_". Call background_list to see this session\'s task ids.');
    assert.equal(output, `background_output: No background task or batch matches "${userTask}". Call background_list to see this session's task ids.`);
    assert.equal(statusOf(s, userTask)?.status, "completed");
  });
});

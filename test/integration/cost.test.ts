import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, pluginDbPath, taskIdsIn, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { main } from "../../src/cli/main.ts";
import { defaultResponder, lastUserText, messageText, trailingToolResults, type MockReply, type MockRequest } from "../harness/mock-model.ts";

/**
 * What background work costs, on the real host: the mock model is priced ($3 / $15 per million
 * input / output tokens) and every answer reports 4,000 input and 1,000 output tokens, so each
 * model request costs $0.027 and counts 5.0k tokens.
 *
 * A child's prompt scripts it: `STEPS <n>` makes n model requests (n - 1 bash calls, then an
 * answer); `INTERIM <text>` is its answer right after launching tasks of its own, `ON_NEWS <text>`
 * its answer when their notification wakes it.
 */
const PER_REQUEST = { input: 4000, output: 1000 };
const PRICE = { input: 3, output: 15 };

function firstUserText(req: MockRequest): string {
  const first = req.body.messages.find((m) => m.role === "user");
  return first ? messageText(first) : "";
}

function script(req: MockRequest): MockReply {
  const own = firstUserText(req);
  const steps = /^STEPS (\d+)$/m.exec(own);
  if (steps) {
    const done = req.body.messages.filter((m) => m.role === "assistant" && m.tool_calls?.length).length;
    if (done < Number(steps[1]) - 1) return { toolCalls: [{ name: "bash", args: { command: `echo step ${done + 1}`, description: "a step" } }] };
    return { text: `finished after ${steps[1]} requests` };
  }
  const interim = /^INTERIM (.*)$/m.exec(lastUserText(req));
  if (interim && trailingToolResults(req).length > 0) return { text: interim[1] };
  const onNews = /^ON_NEWS (.*)$/m.exec(own);
  if (onNews && lastUserText(req).includes("<background-task-notification")) return { text: onNews[1] };
  return defaultResponder(req);
}

/** The notification's first line for the model (after its tag): `Background task … completed after 2s, spent …`. */
const headerOf = (told: string) => /^Background task .*$/m.exec(told)?.[0] ?? told;

const responder = (req: MockRequest): MockReply => (req.isTitle ? defaultResponder(req) : { ...script(req), usage: PER_REQUEST });

describe("what background work costs, on the real host", () => {
  let stack: Stack;
  after(async () => stack?.stop());

  async function launch(parent: string, prompt: string): Promise<string> {
    await stack.say(parent, call("background_task", { description: "costly", prompt, agent: "general" }));
    const [id] = taskIdsIn((await toolOutputs(stack, parent, "background_task")).join("\n")).slice(-1);
    assert.ok(id, "the child was launched");
    return id;
  }

  const notification = (parent: string, child: string) =>
    waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(`task_id="${child}"`)), { timeoutMs: 30_000, what: `the notification of ${child}` });

  async function lastOutput(parent: string, tool: string, args: Record<string, unknown>): Promise<string> {
    await stack.say(parent, call(tool, args));
    return (await toolOutputs(stack, parent, tool)).at(-1) ?? "";
  }

  /** The model requests a session made, as the host counts them (assistant messages). */
  const requestsOf = async (session: string) => (await stack.messages(session)).filter((m) => m.info.role === "assistant").length;

  it("a child's three requests: summed tokens and cost in the notification, background_output and background_list", async () => {
    stack = await startStack({ responder, modelCost: PRICE, pluginOptions: { pollIntervalMs: 500 } });
    const parent = await stack.newSession("parent: cost");
    const child = await launch(parent, "STEPS 3");
    const told = await notification(parent, child);
    assert.equal(await requestsOf(child), 3, "the child made three model requests");
    assert.match(headerOf(told), /completed after .*, spent \$0\.081 · 15\.0k tok\.$/, told);
    assert.match(await lastOutput(parent, "background_output", { task_id: child }), /^Spent: \$0\.081 · 15\.0k tok \(with the tasks it launched\)$/m);
    assert.match(await lastOutput(parent, "background_list", {}), new RegExp(`^${child}.*  cost \\$0\\.081 · 15\\.0k tok$`, "m"));
  });

  it("a child with its own child: both summed (the child's three requests and the grandchild's two)", async () => {
    const parent = await stack.newSession("parent: nested cost");
    const prompt = [
      call("background_task", { description: "grandchild", prompt: "STEPS 2", agent: "general" }),
      "INTERIM launched a helper; waiting for it",
      "ON_NEWS the helper is done",
    ].join("\n");
    const child = await launch(parent, prompt);
    const told = await notification(parent, child);
    const [grandchild] = taskIdsIn((await toolOutputs(stack, child, "background_task")).join("\n"));
    assert.ok(grandchild, "the child launched a grandchild");
    assert.equal(await requestsOf(child), 3, "launch, interim answer, answer on the news");
    assert.equal(await requestsOf(grandchild), 2);
    assert.match(headerOf(told), /, spent \$0\.135 · 25\.0k tok\.$/, told);
    assert.match(await lastOutput(parent, "background_output", { task_id: child }), /^Spent: \$0\.135 · 25\.0k tok/m);
    const list = await lastOutput(parent, "background_list", {});
    assert.match(list, new RegExp(`^${child}.*  cost \\$0\\.135 · 25\\.0k tok$`, "m"), list);
    assert.match(list, new RegExp(`└ ${grandchild}.*  cost \\$0\\.054 · 10\\.0k tok$`, "m"), list);
  });

  it("the CLI reads the same spend from the server's database: show as background_output, costs summing both trees", async () => {
    const cli = (argv: string[]) => {
      let stdout = "";
      const code = main([...argv, "--db", pluginDbPath(stack.server)], { stdout: (t) => void (stdout += t), stderr: (t) => void (stdout += t), env: {}, now: Date.now });
      assert.equal(code, 0, stdout);
      return stdout;
    };
    const tasks = JSON.parse(cli(["list", "--json"])) as Array<{ id: string; parentSessionID: string; spend?: { costUsd: number; requests: number } }>;
    const ids = new Set(tasks.map((t) => t.id));
    const launched = tasks.filter((t) => !ids.has(t.parentSessionID));
    assert.equal(launched.length, 2, "two tasks launched from parent sessions (the grandchild is below one)");
    for (const task of launched) {
      const output = await lastOutput(task.parentSessionID, "background_output", { task_id: task.id });
      const spent = /^Spent: (.*) \(with the tasks it launched\)$/m.exec(output)?.[1];
      assert.match(cli(["show", task.id]), new RegExp(`^  Spent {8}${spent!.replace(/[$.]/g, "\\$&")} \\(with`, "m"));
    }
    const report = JSON.parse(cli(["costs", "--json", "--since", "24h"]));
    assert.deepEqual(report.rows.map((r: { label: string; requests: number; tasks: number }) => [r.label, r.requests, r.tasks]), [["(direct tasks)", 8, 2]]);
    assert.equal(report.rows[0].cost, "$0.216");
    assert.equal(report.total.costUsd, launched.reduce((sum, t) => sum + t.spend!.costUsd, 0));
  });
});

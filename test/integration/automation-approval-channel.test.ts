import { describe, it, after, before } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, pendingPermissions, answerPermission, pluginDbPath, type Stack, type PermissionRequest } from "../harness/plugin-stack.ts";
import { startReceiver, type Receiver } from "../helpers/channel-receiver.ts";
import { main } from "../../src/cli/main.ts";

/**
 * What the user approves and what a json channel receives, on a real OpenCode: a proposal with a
 * budget and isolation says both in its answer, in the command line's listing and in the
 * permission prompt raised when it is approved in the conversation; an isolated run's json
 * notice names its branch in a field of its own, a plain run's is null.
 */
describe("approval prompt and json channel (real host)", () => {
  let stack: Stack;
  let receiver: Receiver;
  let parent: string;
  let proposed = "";
  before(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      pluginOptions: { pollIntervalMs: 500, channels: { bot: { url: receiver.url("/bot"), format: "json" } } },
      config: { permission: { background_automation: "ask" } },
    });
    parent = await stack.newSession("parent: approval and channel");
  });
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await receiver?.close();
  });

  type Prompt = PermissionRequest & { metadata?: { prompt?: string; budget?: string; isolation?: string } };

  /** The model calls a tool; each permission prompt it raises is answered "once" until the tool answers. */
  async function use(tool: string, args: Record<string, unknown>): Promise<{ out: string; prompts: Prompt[] }> {
    const before = (await toolOutputs(stack, parent, tool)).length;
    const prompts: Prompt[] = [];
    void stack.server.client.session.promptAsync({ path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call(tool, args) }] } });
    const out = await waitUntil(async () => {
      for (const p of (await pendingPermissions(stack)).filter((q) => q.sessionID === parent && !prompts.some((s) => s.id === q.id))) {
        prompts.push(p as Prompt);
        await answerPermission(stack, p.id, "once");
      }
      return (await toolOutputs(stack, parent, tool))[before];
    }, { timeoutMs: 30_000, what: `${tool}'s answer` });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    return { out, prompts };
  }

  const cli = (...args: string[]) => {
    let out = "";
    const code = main([...args, "--db", pluginDbPath(stack.server)], { stdout: (t) => void (out += t), stderr: (t) => void (out += t), env: {}, now: Date.now });
    assert.equal(code, 0, out);
    return out;
  };

  it("a proposal's budget and isolation: in task_propose's answer, the CLI's listing, and the prompt raised to approve it", async () => {
    const write = `CALL write ${JSON.stringify({ filePath: "from-the-run.txt", content: "written by the run\n" })}`;
    const { out, prompts } = await use("task_propose", {
      title: "isolated writer", reason: "You asked for a report on a branch of its own.", prompt: write,
      budget: { usd_per_run: 0.5, usd_per_day: 2 }, isolation: "worktree", channels: ["bot"], notify: "always",
    });
    assert.equal(prompts.length, 0, "proposing asks nothing");
    assert.match(out, /^Budget: \$0\.500 per run, \$2\.00 per day\.$/m);
    assert.match(out, /^Isolation: worktree \(each run in a fresh git worktree/m);
    proposed = /Proposed automation (au\w+)/.exec(out)![1]!;

    const listing = cli("proposals");
    assert.match(listing, /Budget\W+\$0\.500 per run, \$2\.00 per day/);
    assert.match(listing, /Isolation\W+worktree: each run in a fresh git worktree/);

    const approved = await use("task_update", { id: proposed, enabled: true });
    assert.match(approved.out, /Approved proposal/);
    const asked = approved.prompts.find((p) => p.permission === "background_automation");
    assert.ok(asked, JSON.stringify(approved.prompts));
    assert.match(asked.metadata?.prompt ?? "", /^budget: \$0\.500 per run, \$2\.00 per day$/m, "the prompt's text names the budget");
    assert.match(asked.metadata?.prompt ?? "", /^isolation: worktree \(/m, "and the isolation");
    assert.equal(asked.metadata?.budget, "$0.500 per run, $2.00 per day");
    assert.equal(asked.metadata?.isolation, "worktree");
  });

  it("the json channel: an isolated run's branch in its own field; a plain run's branch is null", { timeout: 90_000 }, async () => {
    const plain = /automation (au\w+)/.exec((await use("task_create", { title: "plain report", prompt: "REPLY all fine", channels: ["bot"], notify: "always" })).out)![1]!;
    const bodyOf = async (id: string) => {
      await waitUntil(() => receiver.received.some((r) => JSON.parse(r.body).automation?.id === id), { timeoutMs: 45_000, what: `the json notice of ${id}` });
      return JSON.parse(receiver.received.find((r) => JSON.parse(r.body).automation?.id === id)!.body) as { branch: string | null; result: string };
    };
    await use("task_run", { id: proposed });
    const isolated = await bodyOf(proposed);
    assert.match(isolated.branch ?? "", /^bg\/\w+-isolated-writer/, JSON.stringify(isolated));
    assert.match(isolated.result, new RegExp(`^Changes on branch ${isolated.branch}\\.`), "still first in the result, for the other formats");
    await use("task_run", { id: plain });
    const local = await bodyOf(plain);
    assert.ok("branch" in local && local.branch === null, JSON.stringify(local));
  });
});
